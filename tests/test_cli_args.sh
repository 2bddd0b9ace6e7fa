#!/usr/bin/env bash
# What every verb shares (tools/cli_args.c, tools/bench_layers.c): unknown options and options of
# another mode refused with the verb's own name, --name=value, `wino --version` and `wino help`,
# `gen --emit` printing code alone, layer sets found from any directory, given as a file or
# inline with --layer, and user files that are not regular refused without blocking.
# Usage: bash tests/test_cli_args.sh PATH_TO_WINO   (from the repository root)
set -u
wino=${1:?usage: test_cli_args.sh PATH_TO_WINO}
wino=$(cd "$(dirname "$wino")" && pwd)/$(basename "$wino") # some checks run in another directory
# shellcheck source=tests/cli_lib.sh
source "$(dirname "$0")/cli_lib.sh"
small=(--reps 1 --warmup 0 --impl wino-direct --csv)

# expect_run NAME COMMAND...: exit 0.
expect_run() {
    local name=$1
    shift
    if "$@" >"$tmp/out" 2>"$tmp/err"; then ok; else fail "$name: exit $? ($*)"; cat "$tmp/err"; fi
}

# Every verb: unknown options, missing values and values given to flags, named after the verb.
for verb in bench calibrate demo gen info points tune; do
    expect_usage_message "unknown option" "^wino $verb: unknown option \"--frob\"" --frob
    expect_usage_message "unknown --name=value" "^wino $verb: unknown option \"--frob\"" --frob=1
    expect_usage_message "stray argument" "^wino $verb: unexpected argument \"extra\"" extra
done
verb=calibrate
expect_usage_message "flag with a value" "^wino calibrate: --csv takes no value" --csv=yes
expect_usage_message "missing value" "^wino calibrate: --seed needs a value" --seed
expect_usage_message "option as a value" "^wino calibrate: --set needs a value" --set --csv
expect_usage_message "set errors name the verb" '^wino calibrate: unknown layer set "no-such"' \
    --set no-such
expect_usage_message "calibrate conflict" \
    "^wino calibrate: --tile cannot be combined with --study" --study --tile 4
verb=info
expect_usage_message "info takes --set" '^wino info: unknown layer set "no-such"' --set no-such
expect_usage_message "no --layers" '^wino info: unknown option "--layers"' --layers resnet18
verb=gen
expect_usage_message "gen modes" "^wino gen: --op-table cannot be combined with --m" \
    --m 4 --r 3 --op-table
expect_usage_message "gen modes, =" "^wino gen: --m cannot be combined with --write-defaults" \
    --write-defaults=x --m=4
expect_usage_message "choice" '^wino gen: --emit: "fortran" is not one of c\|cuda\|opencl' \
    --m 4 --r 3 --emit=fortran
verb=points
expect_usage_message "points modes" "^wino points: --tie cannot be combined with --eval" \
    --eval --alpha 6 --points 0,1,-1,1/2,-2 --tie 3
verb=tune
expect_usage_message "tune modes" "^wino tune: --set cannot be combined with --check" \
    --check x --set smoke
verb=bench
expect_usage_message "backend modes" \
    "^wino bench: --threads cannot be combined with --backend cuda" \
    --backend cuda --threads 2 --set smoke
expect_usage_message "default backend" \
    "^wino bench: --device cannot be combined with --backend cpu" --device 0 --set smoke
expect_usage_message "backend value" '^wino bench: --backend: "tpu" is not one of cpu\|cuda' \
    --backend=tpu --set smoke

# --name=value means the same as --name value.
if "$wino" gen --m 4 --r 3 --json >"$tmp/a" && "$wino" gen --m=4 --r=3 --json >"$tmp/b" &&
    cmp -s "$tmp/a" "$tmp/b"; then ok; else fail "gen --m=4 --r=3"; fi
expect_run "bench --name=value" \
    "$wino" bench --set=smoke --reps=1 --warmup=0 --impl=wino-direct --csv

# wino --version, wino help, wino help VERB.
if "$wino" --version >"$tmp/out" && grep -Eq '^wino [0-9]+\.[0-9]+\.[0-9]+' "$tmp/out"; then ok
else fail "--version"; fi
if "$wino" help >"$tmp/out" && grep -q '^usage: wino VERB' "$tmp/out" &&
    grep -q '^  calibrate ' "$tmp/out"; then ok; else fail "wino help"; fi
if "$wino" help gen >"$tmp/out" && grep -q '^usage: wino gen' "$tmp/out"; then ok
else fail "wino help gen"; fi
if ! "$wino" help frob >/dev/null 2>&1; then ok; else fail "wino help frob exited 0"; fi

# gen --emit: standard output is the code alone (it compiles), or nothing with --out.
if "$wino" gen --m 4 --r 3 --emit c >"$tmp/emit.c" && ! grep -q '^A^T' "$tmp/emit.c" &&
    cc -std=c99 -c -x c - -o "$tmp/emit.o" <"$tmp/emit.c"; then ok
else fail "gen --emit c: stdout is not C alone"; fi
if "$wino" gen --m 2 --r 3 --emit c --out "$tmp/out.c" >"$tmp/out" && [ ! -s "$tmp/out" ] &&
    cc -std=c99 -c "$tmp/out.c" -o "$tmp/out.o"; then ok
else fail "gen --emit c --out: stdout not empty or the file does not compile"; fi
# OpenCL C with one builtin, fma: compiled here as C (the OpenCL tests compile it as OpenCL).
if "$wino" gen --m 4 --r 3 --emit opencl >"$tmp/emit.cl" && ! grep -q '^A^T' "$tmp/emit.cl" &&
    grep -q 'void wino_f32_input_transform_f4x4_3x3__opencl(' "$tmp/emit.cl" &&
    cc -std=c99 -Dfma=__builtin_fmaf -c -x c - -o "$tmp/emit_cl.o" <"$tmp/emit.cl"; then ok
else fail "gen --emit opencl: stdout is not the OpenCL transforms alone"; fi

# Layer sets: by name from any working directory, as a file (absolute or with .txt), inline.
expect_run "set from another directory" bash -c "cd '$tmp' && '$wino' bench --set smoke ${small[*]}"
expect_run "info from another directory" bash -c "cd / && '$wino' info --set smoke"
grep -v '^#' bench/sets/smoke.txt | head -n 1 >"$tmp/mine.txt"
if "$wino" bench --set "$tmp/mine.txt" "${small[@]}" >"$tmp/out" 2>"$tmp/err" &&
    [ "$(tail -n +2 "$tmp/out" | cut -d, -f1,2)" = "mine,s3x3" ]; then ok
else fail "--set /abs/file.txt"; cat "$tmp/out" "$tmp/err"; fi
if "$wino" bench --layer "1 8 12 12 8 3 3 1 1" --layer "wide 1 4 9 9 6 5 5 2 2" "${small[@]}" \
    >"$tmp/out" 2>"$tmp/err" &&
    [ "$(tail -n +2 "$tmp/out" | cut -d, -f1-10,19 | tr '\n' ' ')" = \
      "inline,layer1,1,8,12,12,8,3,3,1,1 inline,wide,1,4,9,9,6,5,5,2,2 " ]; then ok
else fail "--layer"; cat "$tmp/out" "$tmp/err"; fi
verb=bench
expect_usage_message "--layer, too few" '^wino bench: --layer: expected' --layer "1 8 12 12 8 3 3 1"
expect_usage_message "--layer, not a number" '^wino bench: --layer: a size' \
    --layer "1 8 x 12 8 3 3 1 1"
expect_usage_message "--layer, filter too large" '^wino bench: --layer layer1: ' \
    --layer "1 8 2 2 8 5 5 0 1"
expect_usage_message "missing file" '^wino bench: --set ./none.txt: ' --set ./none.txt

# calibrate refuses a set without a 3x3 stride-1 layer instead of printing nothing.
verb=calibrate
expect_usage_message "calibrate, no eligible layer" 'nothing to calibrate' \
    --layer "1 4 9 9 4 5 5 2 1"

# Files that are not regular are refused at once (a FIFO would block the tool forever).
mkfifo "$tmp/fifo" "$tmp/fifo.txt"
timeout 10 "$wino" calibrate --image "$tmp/fifo" --layer "1 8 12 12 8 3 3 1 1" >"$tmp/out" \
    2>"$tmp/err"
rc=$?
if [ "$rc" -eq 2 ] && grep -q 'not a regular file' "$tmp/err"; then ok
else fail "calibrate --image FIFO: exit $rc"; cat "$tmp/err"; fi
timeout 10 "$wino" bench --set "$tmp/fifo.txt" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 2 ] && grep -q 'not a regular file' "$tmp/err"; then ok
else fail "bench --set FIFO: exit $rc"; cat "$tmp/err"; fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
