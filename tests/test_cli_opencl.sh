#!/usr/bin/env bash
# Command-line checks of `wino tune --backend opencl` and `wino bench --backend opencl`: bad
# input (exit 2, one stderr line, empty stdout); a search of the smoke set (every tile, then
# three candidates of the fastest) whose database holds an entry per tile of each layer the
# backend runs; a CSV bench following that database (the default rows on the default tile, the
# tuned rows on the fastest entry's tile, non-fused and fused, their parameters the database's,
# right results); a bench with --tune into a temporary database. No check
# depends on a time. A build without the OpenCL component says so for `--backend opencl`: then
# the test prints that it skips and exits 77, which CTest reports as skipped, never passed.
# Usage: bash tests/test_cli_opencl.sh PATH_TO_WINO   (from the repository root)
set -u
wino=${1:?usage: test_cli_opencl.sh PATH_TO_WINO}
verb=bench
# shellcheck source=tests/cli_lib.sh
source "$(dirname "$0")/cli_lib.sh"

if "$wino" bench --backend opencl --help 2>&1 | grep -q 'this build has no OpenCL'; then
    echo "SKIP: this build has no OpenCL component (wino bench --backend opencl says so)"
    exit 77
fi

ocl=(--backend opencl --set smoke)
expect_usage_error "dtype bf16" "${ocl[@]}" --dtype bf16
expect_usage_error "op bwd-data" "${ocl[@]}" --op bwd-data
expect_usage_error "threads" "${ocl[@]}" --threads 2
expect_usage_error "tune on the cpu" --backend cpu --set smoke --tune
expect_usage_error "budget negative" "${ocl[@]}" --budget -1
expect_usage_message "no such device" 'OpenCL device 99: this machine has' "${ocl[@]}" \
    --cl-device 99
expect_usage_message "missing database" 'no such file' "${ocl[@]}" --tuning-cache "$tmp/none"
mkfifo "$tmp/fifo"
expect_usage_message "FIFO database" 'not a regular file' "${ocl[@]}" --tune \
    --tuning-cache "$tmp/fifo"
WINO_CL_DEVICE=x expect_usage_message "bad WINO_CL_DEVICE" 'WINO_CL_DEVICE=x' "${ocl[@]}"
verb=tune
expect_usage_error "no cache" --backend opencl --set smoke
expect_usage_error "threads" --backend opencl --cache "$tmp/db" --set smoke --threads 2
expect_usage_error "budget on the cpu" --cache "$tmp/db" --set smoke --budget 5
expect_usage_error "unknown backend" --backend gpu --cache "$tmp/db" --set smoke
expect_usage_error "no such device" --backend opencl --cache "$tmp/db" --set smoke \
    --cl-device 99
expect_usage_error "dtype on the cpu" --cache "$tmp/db" --set smoke --dtype f16

# The search: a header, a line per layer the backend runs (stride 2 is a note), an entry per
# tile each.
if "$wino" tune --backend opencl --cache "$tmp/db" --set smoke --candidates 3 --reps 2 \
    >"$tmp/out" 2>"$tmp/err" && [ "$(wc -l <"$tmp/out")" -eq 3 ] &&
    grep -q '^s3x3 .* F[2-8]x[2-8]_3x3 (fastest of 7 tiles): [1-3] of [0-9]* candidates, .*: ' \
        "$tmp/out" &&
    grep -q '^wino tune: note: s3x3_stride2 skipped' "$tmp/err"; then
    ok
else
    fail "tune smoke run"; cat "$tmp/out" "$tmp/err"
fi

# The bench following it.
if "$wino" bench "${ocl[@]}" --reps 1 --warmup 0 --csv --tuning-cache "$tmp/db" \
    >"$tmp/csv" 2>"$tmp/err"; then
    ok
else
    fail "bench smoke run: nonzero exit"; cat "$tmp/err"
fi
if python3 - "$tmp/csv" "$tmp/db" bench/sets/smoke.txt <<'PY'; then ok; else fail "bench rows"; fi
import csv, sys
out, db, setfile = sys.argv[1:4]
design = "set,layer,N,C,H,W,K,R,S,pad,dtype,backend,impl,tile,ms,eff_gflops,workspace_bytes,device"
lines = open(out).read().splitlines()
assert lines[0] == design + ",stride,rel_l1,prepare_ms,variant,threads,choice,layout,op", lines[0]
rows = list(csv.DictReader(lines))
db_lines = open(db).read().splitlines()
assert db_lines[0] == "wino-opencl-tuning 2", db_lines[0]
entries = {}  # layer -> {tile m: (variant, GEMM text, fused text, the variant's ms)}
for line in db_lines[1:]:
    device, fields = line.split("\t")
    f = fields.split()
    assert len(f) == 30, line
    key = tuple(int(v) for v in f[2:11])  # N C H W K R S PAD_H PAD_W
    p = [int(v) for v in f[17:28]]
    variant = int(f[16])
    entries.setdefault(key, {})[int(f[15])] = (
        variant, "gemm %dx%d/%dx%d bk%d %s chunk%d" % (*p[:5], "local" if p[5] else "global", p[6]),
        "fused %dx%d kpt%d fc%d" % tuple(p[7:]), float(f[29 if variant == 2 else 28]))
layers = {l.split()[0]: l.split() for l in open(setfile) if l.strip() and not l.startswith("#")}
assert len(entries) == 2, entries  # the stride-2 layer has none
# every tile: m 2..8 with alpha = m + r - 1 <= 10
assert all(sorted(e) == list(range(2, min(8, 11 - key[5]) + 1)) for key, e in entries.items()), \
    entries
seen = {}
for row in rows:
    l = layers[row["layer"]]
    assert row["set"] == "smoke" and l[9] == "1", row
    assert row["backend"] == "opencl" and row["dtype"] == "f32" and row["layout"] == "NHWC", row
    assert row["op"] == "fwd" and row["threads"] == "" and row["device"], row
    n, c, h, w, k, r, s, pad = (int(v) for v in l[1:9])
    tiles = entries[(n, c, h, w, k, r, s, pad, pad)]
    m = min(tiles, key=lambda m: tiles[m][3]) if row["impl"] == "wino-opencl-tuned" else \
        (4 if r == 3 else 2)  # AUTO: the fastest tile's entry; else the default tile
    assert row["tile"] == "F%dx%d_%dx%d" % (m, m, r, r), (row, tiles)
    assert float(row["ms"]) > 0 and 0 <= float(row["rel_l1"]) < 1e-3, row
    assert row["variant"] in ("non-fused", "fused"), row
    assert (int(row["workspace_bytes"]) == 0) == (row["variant"] == "fused"), row
    seen.setdefault(row["layer"], []).append((row["impl"], row["variant"]))
    if row["impl"] == "wino-opencl-tuned":
        variant, gemm, fused, _ = tiles[m]
        want = fused if row["variant"] == "fused" else gemm
        auto = (variant == 2) == (row["variant"] == "fused")
        assert row["choice"] == want + ("; AUTO runs it" if auto else ""), (row, want)
for name, impls in seen.items():
    assert sorted(impls) == sorted((i, v) for i in ("wino-opencl", "wino-opencl-tuned")
                                   for v in ("non-fused", "fused")), (name, impls)
assert sorted(seen) == ["s3x3", "s5x5"], seen
PY

# --tune into a temporary database: tuned rows without --tuning-cache.
if "$wino" bench --backend opencl --layer "t 1 4 8 8 4 3 3 1 1" --tune --candidates 3 \
    --reps 1 --warmup 0 --csv >"$tmp/csv" 2>"$tmp/err" &&
    [ "$(grep -c ',wino-opencl-tuned,' "$tmp/csv")" -eq 2 ] &&
    grep -q '^wino bench: note: t tuned: F[2-8]x[2-8]_3x3 (fastest of 7 tiles), [1-3] of ' \
        "$tmp/err"; then
    ok
else
    fail "bench --tune"; cat "$tmp/csv" "$tmp/err"
fi

# FP16: tensors in FP16 (the rows say f16), checked against the reference of the FP16 values.
if "$wino" bench --backend opencl --dtype f16 --layer "h 1 4 8 8 4 3 3 1 1" --reps 1 \
    --warmup 0 --csv >"$tmp/csv" 2>"$tmp/err" &&
    [ "$(grep -c '^inline,h,.*,f16,opencl,wino-opencl,F4x4_3x3,' "$tmp/csv")" -eq 2 ]; then
    ok
else
    fail "bench --dtype f16"; cat "$tmp/csv" "$tmp/err"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
