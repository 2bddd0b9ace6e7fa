#!/usr/bin/env bash
# `wino tune --check`, `tune --cache` and `bench --tuning-cache` with a FIFO (refused at once or
# ignored, never a hang), and a well-formed cache whose entry wino_tune could not have written
# (reported as stale).
# Usage: bash tests/test_cli_tune_check.sh PATH_TO_WINO   (from the repository root)
set -u
wino=${1:?usage: test_cli_tune_check.sh PATH_TO_WINO}
verb=tune
# shellcheck source=tests/cli_lib.sh
source "$(dirname "$0")/cli_lib.sh"

# expect_refusal NAME ARGS...: `wino ARGS` ends within 20 s with a non-zero status other than
# timeout's and says why on stderr.
expect_refusal() {
    local name=$1
    shift
    timeout 20 "$wino" "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ -s "$tmp/err" ]; then
        ok
    else
        fail "$name: exit $rc (wino $*)"
        cat "$tmp/err"
    fi
}

mkfifo "$tmp/fifo"
expect_refusal "tune --check FIFO" tune --check "$tmp/fifo"
if grep -q "regular file" "$tmp/err"; then ok; else fail "tune --check FIFO: no reason given"; fi
expect_refusal "tune --cache FIFO" tune --cache "$tmp/fifo" --set smoke --reps 1 --threads 1
# the bench either refuses the FIFO, saying why, or runs as without a cache: it never waits
timeout 60 "$wino" bench --backend cpu --set smoke --reps 1 --impl wino-auto \
    --tuning-cache "$tmp/fifo" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 0 ] || { [ "$rc" -ne 124 ] && grep -q "regular file" "$tmp/err"; }; then
    ok
else
    fail "bench --tuning-cache FIFO: exit $rc"
    cat "$tmp/err"
fi
if [ -p "$tmp/fifo" ]; then ok; else fail "the FIFO was replaced"; fi

# F(14x14, 3x3) for the smoke set's first layer: well formed, but not a tile wino tune times
for isa in 0 1 2; do
    echo "$isa 1 0 0 1 8 12 12 8 3 3 1 1 1 1 1 1 2 14 1 0.5"
done | { echo "wino-tuning-cache 1"; cat; } >"$tmp/stale"
expect_refusal "tune --check stale" tune --check "$tmp/stale"
if grep -q "line 2 .*stale" "$tmp/err"; then ok; else fail "tune --check stale: $(cat "$tmp/err")"; fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
