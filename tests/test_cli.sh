#!/usr/bin/env bash
# The `wino` tool: help on every verb, one clear stderr line and exit 2 on bad input (never a
# crash), exact JSON from `wino gen`, and a small demo run.
wino=${1:?usage: test_cli.sh PATH_TO_WINO}
passed=0 failed=0
pass() { passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }

# expect_bad ARGS...: exit status 2 and exactly one line on stderr.
expect_bad() {
  local err rc
  err=$("$wino" "$@" 2>&1 >/dev/null); rc=$?
  if [ "$rc" -ne 2 ]; then fail "wino $* exited $rc, expected 2"; return; fi
  if [ "$(printf '%s\n' "$err" | wc -l)" -ne 1 ] || [ -z "$err" ]; then
    fail "wino $*: expected one stderr line, got: $err"; return
  fi
  pass
}

expect_ok() {
  if "$wino" "$@" >/dev/null 2>&1; then pass; else fail "wino $* failed"; fi
}

expect_ok --help
for verb in bench calibrate demo gen info points tune; do expect_ok "$verb" --help; done
expect_bad
expect_bad frobnicate

expect_bad gen --m 0 --r 3
expect_bad gen --m -4 --r 3
expect_bad gen --m 4
expect_bad gen --m 15 --r 3                       # alpha 17 above the maximum
expect_bad gen --m 10 --r 9
expect_bad gen --m 4 --r 3 --points 0,1,-1,2,1/0  # malformed points
expect_bad gen --m 4 --r 3 --points 0,1,-1,2,abc
expect_bad gen --m 4 --r 3 --points 0,1,-1,2,2    # repeated
expect_bad gen --m 4 --r 3 --points 0,1,-1,2      # too few
expect_bad gen --m 4 --r 3 --points 0,1,-1,2,-2,3 # too many
expect_bad gen --m 4 --r 3 --points 0,1,-1,2,inf
expect_bad gen --m x --r 3
expect_bad gen --m 4 --r 3 --emit fortran
expect_bad gen --m 4 --r 3 --out /tmp/x.c
expect_bad gen --m 4 --r 3 --bogus
expect_bad gen --m 4 --r
expect_bad demo --c 0
expect_bad demo --hw
expect_bad demo --what

json=$("$wino" gen --m 4 --r 3 --points 0,1,-1,2,-2 --json) || fail "gen --json failed"
if command -v python3 >/dev/null; then
  if printf '%s' "$json" | python3 -c '
import json, sys
o = json.load(sys.stdin)
assert o["m"] == 4 and o["r"] == 3 and o["alpha"] == 6
assert o["points"] == ["0", "1", "-1", "2", "-2", "inf"]
assert o["BT"][0] == ["4", "0", "-5", "0", "1", "0"]
assert o["G"][1] == ["-1/6", "-1/6", "-1/6"] and o["G"][3] == ["1/24", "1/12", "1/6"]
assert o["AT"][3] == ["0", "1", "-1", "8", "-8", "1"]
for t in ("input", "filter", "output"):
    assert o["ops"][t]["optimized"]["add"] <= o["ops"][t]["baseline"]["add"]
'; then pass; else fail "gen --json content"; fi
else
  case "$json" in *'"G":[["1/4","0","0"],["-1/6","-1/6","-1/6"]'*) pass ;; *) fail "gen --json content" ;; esac
fi

out=$("$wino" demo --c 2 --hw 5 --k 3) || fail "small demo failed"
case "$out" in *"Winograd F(4x4,3x3)"*"relative L1"*) pass ;; *) fail "demo output: $out" ;; esac
# the demo times warm runs (a cold first call would mostly time page faults) and says so
case "$out" in *"median of 5 warm runs after one warm-up"*) pass ;;
  *) fail "demo timing: $out" ;; esac
expect_bad demo --reps 0

# `wino info` recomputes Mori et al. Table 1 (their ResNet-18 column: 1.76, 2.05, 2.45, 2.24).
out=$("$wino" info) || fail "wino info failed"
case "$out" in *"| F(4,3) | 100x | 4x | 4x | 2.45x |"*"| F(6,3) | 225x | 7.11x | 5.06x | 2.24x |"*) pass ;;
  *) fail "wino info output: $out" ;; esac
expect_bad info --set no-such-set
expect_bad info --bogus

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
