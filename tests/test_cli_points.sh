#!/usr/bin/env bash
# Command-line checks of `wino points`: --help, bad input (exit 2 with exactly one line on stderr,
# nothing on stdout, no crash) and small runs whose output must parse.
# Usage: bash tests/test_cli_points.sh PATH_TO_WINO   (from the repository root)
set -u
wino=${1:?usage: test_cli_points.sh PATH_TO_WINO}
verb=points
# shellcheck source=tests/cli_lib.sh
source "$(dirname "$0")/cli_lib.sh"

# expect_json NAME ARGS...: exit 0 and stdout is one JSON object with the given keys.
expect_json() {
    local name=$1
    shift
    if ! "$wino" points "$@" >"$tmp/out" 2>"$tmp/err"; then
        fail "$name: nonzero exit (wino points $*)"
        cat "$tmp/err"
        return
    fi
    if command -v python3 >/dev/null 2>&1; then
        if python3 -c '
import json, sys
o = json.load(sys.stdin)
assert set(["alpha", "points", "median_rel_l1", "trials", "seconds"]) <= set(o), o
assert o["points"][:3] == ["0", "1", "-1"], o
assert 0 < o["median_rel_l1"] < 1e-3, o
' <"$tmp/out"; then ok; else fail "$name: output is not the expected JSON"; fi
    elif grep -q '^{"alpha":[0-9]*,"points":\["0","1","-1"' "$tmp/out" &&
        grep -q '"median_rel_l1":' "$tmp/out"; then
        ok
    else
        fail "$name: output is not the expected JSON"
    fi
}

"$wino" points --help >"$tmp/out" 2>"$tmp/err"
if [ $? -eq 0 ] && grep -q '^usage: wino points' "$tmp/out" && [ ! -s "$tmp/err" ]; then
    ok
else
    fail "--help"
fi

expect_usage_error "no options"
expect_usage_error "alpha 3" --alpha 3
expect_usage_error "alpha 17" --alpha 17
expect_usage_error "alpha not a number" --alpha eight
expect_usage_error "trials 0" --alpha 5 --trials 0
expect_usage_error "trials negative" --alpha 5 --trials -3
expect_usage_error "threads 0" --alpha 5 --threads 0
expect_usage_error "screen above trials" --alpha 5 --trials 100 --screen 200
expect_usage_error "tie above 100" --alpha 5 --tie 101
expect_usage_error "tie not a number" --alpha 5 --tie x
expect_usage_error "tie with eval" --eval --alpha 6 --points 0,1,-1,1/2,-2 --tie 3
expect_usage_error "unknown option" --alpha 5 --frobnicate
expect_usage_error "stray argument" --alpha 5 extra
expect_usage_error "missing value" --alpha
expect_usage_error "missing trials value" --alpha 5 --trials
expect_usage_error "zero denominator" --eval --alpha 6 --points 0,1,-1,1/0,2
expect_usage_error "not a number" --eval --alpha 6 --points 0,1,-1,abc,2
expect_usage_error "repeated points" --eval --alpha 6 --points 0,1,-1,2,2
expect_usage_error "too few points" --eval --alpha 6 --points 0,1,-1
expect_usage_error "too many points" --eval --alpha 6 --points 0,1,-1,2,-2,3
expect_usage_error "eval without points" --eval --alpha 6
expect_usage_error "points without eval" --alpha 6 --points 0,1,-1,2,-2
expect_usage_error "all with alpha" --all --alpha 6
expect_usage_error "write-db without all" --alpha 6 --write-db "$tmp/db.c"

# Points whose FP32 Winograd overflows: a clear error and a failing exit, never "nan" and 0.
"$wino" points --eval --alpha 8 --points 0,1,-1,100000,-100000,1000000,-1000000 --trials 20 \
    >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 1 ] && [ ! -s "$tmp/out" ] && [ "$(wc -l <"$tmp/err")" -eq 1 ]; then
    ok
else
    fail "non-finite --eval: exit $rc"
    cat "$tmp/out" "$tmp/err"
fi

expect_json "search --json" --alpha 5 --trials 200 --json
expect_json "eval --json" --eval --alpha 6 --points 0,1,-1,1/2,-2 --trials 200 --json

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
