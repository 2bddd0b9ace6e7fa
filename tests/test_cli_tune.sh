#!/usr/bin/env bash
# Command-line checks of `wino tune`: --help, bad input (exit 2, one stderr line, empty stdout),
# a small run on the smoke set whose cache `--check` accepts, in FP32 and INT8 (whose choices
# `wino bench --dtype int8 --tuning-cache` runs as wino-auto).
# Usage: bash tests/test_cli_tune.sh PATH_TO_WINO   (from the repository root)
set -u
wino=${1:?usage: test_cli_tune.sh PATH_TO_WINO}
verb=tune
# shellcheck source=tests/cli_lib.sh
source "$(dirname "$0")/cli_lib.sh"

if "$wino" tune --help >"$tmp/out" 2>&1 && grep -q "usage: wino tune" "$tmp/out"; then ok; else fail "--help"; fi
expect_usage_error "no options"
expect_usage_error "no set" --cache "$tmp/c"
expect_usage_error "unknown set" --cache "$tmp/c" --set no-such-set
expect_usage_error "reps 0" --cache "$tmp/c" --set smoke --reps 0
expect_usage_error "threads x" --cache "$tmp/c" --set smoke --threads x
expect_usage_error "bad layout" --cache "$tmp/c" --set smoke --layout nchwc
expect_usage_error "missing value" --cache
expect_usage_error "unknown option" --frobnicate
expect_usage_message "int8 in nchw" "NHWC" --cache "$tmp/c" --set smoke --dtype int8 --layout nchw
expect_usage_message "f16 on the cpu" "opencl" --cache "$tmp/c" --set smoke --dtype f16
expect_usage_message "s8 on opencl" "cpu" --backend opencl --cache "$tmp/c" --set smoke --dtype s8

if "$wino" tune --cache "$tmp/c" --set smoke --reps 1 --threads 1 >"$tmp/out" 2>"$tmp/err" &&
   [ "$(wc -l <"$tmp/out")" -eq 3 ] && "$wino" tune --check "$tmp/c" >/dev/null; then
    ok
else
    fail "smoke run"; cat "$tmp/err"
fi
# INT8: the choices printed are those in the cache, and bench's wino-auto row runs each one
if "$wino" tune --dtype int8 --cache "$tmp/c8" --set smoke --reps 1 --threads 1 >"$tmp/out" \
    2>"$tmp/err" && [ "$(wc -l <"$tmp/out")" -eq 3 ] && "$wino" tune --check "$tmp/c8" >/dev/null &&
    "$wino" bench --backend cpu --set smoke --dtype int8 --impl wino-auto --reps 1 --warmup 0 \
        --threads 1 --tuning-cache "$tmp/c8" --csv >"$tmp/csv" 2>>"$tmp/err" &&
    python3 - "$tmp/out" "$tmp/csv" <<'EOF'; then
import csv, re, sys
tuned = dict(re.match(r"(\S+) .*: (direct|winograd m=\d)\s", line).groups()
             for line in open(sys.argv[1]))
rows = list(csv.DictReader(open(sys.argv[2])))
assert len(rows) == 3, rows
for r in rows:
    assert (r["impl"], r["dtype"]) == ("wino-auto", "int8"), r
    m = re.match(r"winograd m=(\d)", tuned[r["layer"]])
    assert r["choice"] == ("winograd F%sx%s_3x3" % (m[1], m[1]) if m else "direct"), (r, tuned)
EOF
    ok
else
    fail "int8 smoke run"; cat "$tmp/out" "$tmp/err"
fi
printf 'not a cache\n' >"$tmp/bad"
if ! "$wino" tune --check "$tmp/bad" 2>/dev/null; then ok; else fail "--check accepted a bad file"; fi

# A cache that is not a regular file (a FIFO would block a reader) is refused at once with the
# library's message.
mkfifo "$tmp/fifo"
timeout 10 "$wino" tune --check "$tmp/fifo" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 1 ] && grep -q '^wino tune: .*regular file' "$tmp/err"; then ok
else fail "--check FIFO: exit $rc"; cat "$tmp/err"; fi
timeout 10 "$wino" tune --cache "$tmp/fifo" --set smoke --reps 1 >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 1 ] && grep -q '^wino tune: .*regular file' "$tmp/err"; then ok
else fail "--cache FIFO: exit $rc"; cat "$tmp/err"; fi
timeout 10 "$wino" bench --set smoke --impl wino-auto --reps 1 --tuning-cache "$tmp/fifo" \
    >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 2 ] && grep -q '^wino bench: --tuning-cache: .*regular file' "$tmp/err"; then ok
else fail "bench --tuning-cache FIFO: exit $rc"; cat "$tmp/err"; fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
