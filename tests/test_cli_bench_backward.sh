#!/usr/bin/env bash
# `wino bench --op bwd-data|bwd-filter` on the CPU: CSV runs on the smoke set whose header is the
# forward bench's plus the op column, with wino's rows present and checked against the FP64
# reference (finite relative L1 error below 1e-4), best-measured copying a row of its layer, and
# bad --op values and --dtype bf16 anywhere but the CUDA bwd-filter refused as bad usage (exit 2,
# one line on stderr).
# Usage: bash tests/test_cli_bench_backward.sh PATH_TO_WINO   (from the repository root)
set -u
wino=${1:?usage: test_cli_bench_backward.sh PATH_TO_WINO}
verb=bench
# shellcheck source=tests/cli_lib.sh
source "$(dirname "$0")/cli_lib.sh"

cpu=(--backend cpu --set smoke)
expect_usage_message "unknown op" 'op.*nonsense|nonsense.*op' "${cpu[@]}" --op nonsense
expect_usage_message "backward int8" 'f32 only' "${cpu[@]}" --op bwd-filter --dtype int8
expect_usage_message "backward int8 on cuda" 'f32 or f16' --backend cuda --set smoke \
    --op bwd-data --dtype int8
expect_usage_message "bf16 on the cpu" 'cuda only' "${cpu[@]}" --op bwd-filter --dtype bf16
expect_usage_message "bf16 forward" 'bwd-filter only' --backend cuda --set smoke --dtype bf16
expect_usage_message "bf16 backward-data" 'bwd-filter only' --backend cuda --set smoke \
    --op bwd-data --dtype bf16

for op in bwd-filter bwd-data; do
    if "$wino" bench "${cpu[@]}" --op "$op" --reps 1 --warmup 0 --csv >"$tmp/$op.csv" \
        2>"$tmp/$op.err"; then
        ok
    else
        fail "$op smoke run: nonzero exit"
        cat "$tmp/$op.err"
        continue
    fi
    if python3 - "$tmp/$op.csv" bench/sets/smoke.txt "$op" <<'EOF'; then
import csv, math, sys
out, setfile, op = sys.argv[1], sys.argv[2], sys.argv[3]
header = ("set,layer,N,C,H,W,K,R,S,pad,dtype,backend,impl,tile,ms,eff_gflops,workspace_bytes,"
          "device,stride,rel_l1,prepare_ms,variant,threads,choice,op")
lines = open(out).read().splitlines()
assert lines[0] == header, lines[0]
rows = list(csv.DictReader(lines))
layers = {l.split()[0]: l.split() for l in open(setfile) if l.strip() and not l.startswith("#")}
for name, fields in layers.items():
    mine = [r for r in rows if r["layer"] == name]
    impls = [r["impl"] for r in mine]
    # AUTO and DIRECT serve every layer; the Winograd paths need stride 1
    assert "wino-auto" in impls and "wino-direct" in impls, (name, impls)
    if fields[9] == "1":
        assert "wino-winograd" in impls, (name, impls)
    for r in mine:
        assert r["op"] == op and r["dtype"] == "f32" and r["backend"] == "cpu", r
        assert [r[f] for f in "N C H W K R S pad stride".split()] == fields[1:10], r
        assert float(r["ms"]) > 0 and float(r["eff_gflops"]) > 0, r
        assert int(r["workspace_bytes"]) >= 0, r
        err = float(r["rel_l1"])
        assert math.isfinite(err) and 0 <= err, r
        if r["impl"].startswith("wino-"):
            assert err < 1e-4, r
        if op == "bwd-filter" and r["impl"] == "wino-winograd":
            assert r["tile"].startswith("F") and "_" in r["tile"], r  # WinRS: F{n}_{r}[+...]
    best = [r for r in mine if r["impl"] == "best-measured"]
    assert len(best) == 1, (name, impls)
    same = [r for r in mine if r["impl"] != "best-measured" and
            r["ms"] == best[0]["ms"] and best[0]["choice"] ==
            "measured: " + " ".join(x for x in (r["impl"], r["tile"]) if x)]
    assert same, best[0]
assert {r["layer"] for r in rows} == set(layers), rows
EOF
        ok
    else
        fail "$op smoke CSV"
        cat "$tmp/$op.csv" "$tmp/$op.err"
    fi
done

# The readable table names the op and every layer.
if "$wino" bench "${cpu[@]}" --op bwd-filter --impl wino-auto --reps 1 --warmup 0 \
    >"$tmp/out" 2>"$tmp/err" && grep -q 'cpu, bwd-filter f32' "$tmp/out" &&
    [ "$(grep -c '^s[0-9a-z_]*: N=' "$tmp/out")" -eq 3 ]; then
    ok
else
    fail "bwd-filter table output"
    cat "$tmp/out" "$tmp/err"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
