#!/usr/bin/env bash
# Points whose transforms leave the FP32 range: `wino gen --emit` and `wino points --eval` refuse
# with a message naming the value (exit status 1..127: no crash, no signal), and `wino gen`
# without --emit still prints the exact matrices.
# Usage: bash tests/test_cli_gen_overflow.sh PATH_TO_WINO   (from the repository root)
set -u
wino=${1:?usage: test_cli_gen_overflow.sh PATH_TO_WINO}
verb=gen
# shellcheck source=tests/cli_lib.sh
source "$(dirname "$0")/cli_lib.sh"

huge=1$(printf '0%.0s' {1..40})           # 1e40 > FLT_MAX
tiny=1/1$(printf '0%.0s' {1..50})         # 1e-50 < FLT_MIN
near=1000000000000000000000096            # entries fit; a recipe constant is its square

# expect_refused NAME WORD ARGS...: exit 1..127 and stderr names the value WORD in an FP32 message.
expect_refused() {
    local name=$1 word=$2
    shift 2
    "$wino" "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    if [ "$rc" -ge 1 ] && [ "$rc" -lt 128 ] && grep -q "FP32" "$tmp/err" &&
        grep -qF -- "$word" "$tmp/err"; then
        ok
    else
        fail "$name: exit $rc (wino $*)"
        cat "$tmp/err"
    fi
}

for lang in c cuda opencl; do
    expect_refused "1e40 point, $lang" "$huge" gen --m 2 --r 3 --points "0,1,$huge" --emit "$lang"
    expect_refused "1e-50 point, $lang" "$tiny" gen --m 2 --r 3 --points "0,1,$tiny" --emit "$lang"
    expect_refused "constant 1e48, $lang" "1000000000000000000000192000000000000000000009216" \
        gen --m 1 --r 3 --points "1,$near" --emit "$lang"
done
expect_refused "eval of a 1e40 point" "$huge" points --eval --alpha 5 --points "0,1,-1,$huge" \
    --trials 100

# The exact matrices need no float: the report and the JSON still work.
for mode in "" --json; do
    if "$wino" gen --m 2 --r 3 --points "0,1,$huge" $mode >"$tmp/out" 2>"$tmp/err" &&
        grep -qF -- "$huge" "$tmp/out"; then
        ok
    else
        fail "exact matrices of the 1e40 point ${mode:-(report)}"
        cat "$tmp/err"
    fi
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
