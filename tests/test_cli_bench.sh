#!/usr/bin/env bash
# Command-line checks of `wino bench`: --help, bad input (exit 2 with exactly one line on stderr,
# nothing on stdout) and one small CSV run on the smoke set whose rows must parse.
# Usage: bash tests/test_cli_bench.sh PATH_TO_WINO   (from the repository root)
set -u
wino=${1:?usage: test_cli_bench.sh PATH_TO_WINO}
verb=bench
# shellcheck source=tests/cli_lib.sh
source "$(dirname "$0")/cli_lib.sh"

"$wino" bench --help >"$tmp/out" 2>"$tmp/err"
if [ $? -eq 0 ] && grep -q '^usage: wino bench' "$tmp/out" && [ ! -s "$tmp/err" ]; then
    ok
else
    fail "--help"
fi

cpu=(--backend cpu --set smoke)
expect_usage_error "no options"
expect_usage_error "no set" --backend cpu
expect_usage_error "unknown set" --backend cpu --set no-such-set
expect_usage_error "set with a path" --backend cpu --set ../smoke
expect_usage_error "unknown backend" --backend tpu --set smoke
expect_usage_error "cuda not built" --backend cuda --set smoke
expect_usage_error "unknown dtype" "${cpu[@]}" --dtype f64
expect_usage_error "dtype f16" "${cpu[@]}" --dtype f16
expect_usage_error "unknown impl" "${cpu[@]}" --impl wino-auto,frob
expect_usage_error "empty impl" "${cpu[@]}" --impl ""
expect_usage_error "reps 0" "${cpu[@]}" --reps 0
expect_usage_error "reps not a number" "${cpu[@]}" --reps ten
expect_usage_error "batch 0" "${cpu[@]}" --batch 0
expect_usage_error "threads 0" "${cpu[@]}" --threads 0
expect_usage_error "warmup negative" "${cpu[@]}" --warmup -1
expect_usage_error "missing value" "${cpu[@]}" --reps
expect_usage_error "unknown option" "${cpu[@]}" --frobnicate
expect_usage_error "stray argument" "${cpu[@]}" extra
expect_usage_error "missing sets dir" "${cpu[@]}" --sets-dir "$tmp/none"

# A malformed set file is bad input too.
printf 'bad 1 2 3\n' >"$tmp/broken.txt"
expect_usage_error "malformed set" --backend cpu --set broken --sets-dir "$tmp"

# The smoke run: exact header, one row per (layer, implementation that can run it), sane fields.
# Expected rows come from the set and the built-in implementations: wino-auto and wino-direct on
# every layer, wino-winograd for m = 2, 4, 6 on stride-1 layers; the baselines when built in
# (read from --help): oneDNN direct everywhere, oneDNN Winograd on stride-1 3x3 layers only,
# OpenBLAS everywhere.
if "$wino" bench "${cpu[@]}" --reps 1 --warmup 0 --csv >"$tmp/out" 2>"$tmp/err"; then
    ok
else
    fail "smoke run: nonzero exit"
    cat "$tmp/err"
fi
"$wino" bench --help >"$tmp/help"
have() { grep -E "^ +$1 *$" "$tmp/help" >/dev/null; } # listed without "(unavailable ...)"
onednn=0
openblas=0
have onednn-direct && onednn=1
have openblas-im2col && openblas=1
if python3 - "$tmp/out" bench/sets/smoke.txt "$onednn" "$openblas" "$tmp/err" <<'EOF'; then
import csv, sys
out, setfile, onednn, openblas = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
# oneDNN has Winograd kernels on some CPUs only (AVX-512): a note names each layer it skipped
no_onednn_winograd = {l.split()[3] for l in open(sys.argv[5])
                      if "onednn-winograd skipped: oneDNN has no Winograd" in l}
design = "set,layer,N,C,H,W,K,R,S,pad,dtype,backend,impl,tile,ms,eff_gflops,workspace_bytes,device"
lines = open(out).read().splitlines()
assert lines[0] == design + ",stride,rel_l1,prepare_ms,variant,threads,choice,op", lines[0]
rows = list(csv.DictReader(lines))
layers = [l.split() for l in open(setfile) if l.strip() and not l.startswith("#")]
expected = 0
for name, n, c, h, w, k, r, s, pad, stride in layers:
    st1 = stride == "1"
    expected += 2 + (3 if st1 and r == s else 0) + openblas
    winograd = st1 and r == s == "3" and name not in no_onednn_winograd
    expected += onednn * (1 + (1 if winograd else 0))
assert len(rows) == expected, (len(rows), expected)
names = {l[0]: l for l in layers}
impls = {"wino-auto", "wino-winograd", "wino-direct", "onednn-direct", "onednn-winograd",
         "openblas-im2col"}
for row in rows:
    assert row["set"] == "smoke" and row["layer"] in names, row
    assert [row[f] for f in "N C H W K R S pad".split()] == names[row["layer"]][1:9], row
    assert row["dtype"] == "f32" and row["backend"] == "cpu" and row["impl"] in impls, row
    assert row["op"] == "fwd", row
    assert float(row["ms"]) > 0 and float(row["eff_gflops"]) > 0, row
    assert int(row["workspace_bytes"]) >= 0, row
    assert row["device"].endswith("threads)") or row["device"].endswith("thread)"), row
    if row["impl"] == "wino-winograd":
        assert row["tile"].startswith("F") and row["tile"].endswith("_%sx%s" % (row["R"], row["S"])), row
    if row["impl"] in ("wino-direct", "openblas-im2col", "onednn-direct"):
        assert row["tile"] == "", row
    # the columns after DESIGN.md's header: those of the text table and wino-auto's choice
    assert row["stride"] == names[row["layer"]][9], row
    assert 0 <= float(row["rel_l1"]) < 1e-2 and float(row["prepare_ms"]) >= 0, row
    plural = "" if row["threads"] == "1" else "s"
    assert row["device"].endswith("(%s thread%s)" % (row["threads"], plural)), row
    if row["impl"] in ("wino-winograd", "wino-auto") and row["tile"]:
        assert row["variant"] in ("fused", "non-fused", "scalar"), row
    else:
        assert row["variant"] == "", row
    if row["impl"] == "wino-auto":
        assert row["choice"] in ("direct", "winograd %s %s" % (row["tile"], row["variant"])), row
    else:
        assert row["choice"] == "", row
EOF
    ok
else
    fail "smoke CSV"
    cat "$tmp/out"
fi

# --dtype int8: wino's INT8 tiles on the stride-1 3x3 layer only (each checked against the integer
# specification inside the bench), rows marked int8.
if "$wino" bench "${cpu[@]}" --dtype int8 --impl wino-winograd --reps 1 --warmup 0 --csv \
    >"$tmp/out" 2>"$tmp/err" &&
    [ "$(tail -n +2 "$tmp/out" | cut -d, -f2,11,13 | sort -u)" = "s3x3,int8,wino-winograd" ] &&
    [ "$(tail -n +2 "$tmp/out" | wc -l)" -ge 2 ]; then
    ok
else
    fail "--dtype int8"
    cat "$tmp/out" "$tmp/err"
fi

# --impl filters and --batch overrides N.
if "$wino" bench "${cpu[@]}" --reps 1 --warmup 0 --csv --impl wino-direct --batch 3 \
    >"$tmp/out" 2>"$tmp/err" &&
    [ "$(tail -n +2 "$tmp/out" | wc -l)" -eq 3 ] &&
    [ "$(tail -n +2 "$tmp/out" | cut -d, -f3,13 | sort -u)" = "3,wino-direct" ]; then
    ok
else
    fail "--impl wino-direct --batch 3"
    cat "$tmp/out" "$tmp/err"
fi

# The readable table names every layer.
if "$wino" bench "${cpu[@]}" --reps 1 --warmup 0 --impl wino-auto >"$tmp/out" 2>"$tmp/err" &&
    [ "$(grep -c '^s[0-9a-z_]*: N=' "$tmp/out")" -eq 3 ]; then
    ok
else
    fail "table output"
    cat "$tmp/out" "$tmp/err"
fi

# INT8: a row named wino-* is always wino's own kernel; the per-layer best of the run is the
# best-measured row, which copies the row it names (never a baseline's time under wino's name).
if "$wino" bench "${cpu[@]}" --dtype int8 --reps 1 --warmup 0 --csv >"$tmp/out" 2>"$tmp/err" &&
    python3 - "$tmp/out" <<'EOF'; then
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert rows, "no rows"
for r in rows:
    if r["impl"].startswith("wino-"):  # INT8 Winograd with its tile, or INT8 direct
        assert (r["impl"], bool(r["tile"])) in (("wino-winograd", True), ("wino-direct", False)), r
for best in (r for r in rows if r["impl"] == "best-measured"):
    same = [r for r in rows if r["layer"] == best["layer"] and r is not best and r["ms"] == best["ms"]]
    assert same and best["choice"] == "measured: " + " ".join(
        x for x in (same[0]["impl"], same[0]["tile"]) if x), best
EOF
    ok
else
    fail "int8 rows: wino-* only for wino's kernels"
    cat "$tmp/out" "$tmp/err"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
