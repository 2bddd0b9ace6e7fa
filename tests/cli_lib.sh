# Shared by the CLI test scripts: counters, a scratch folder, and the bad-usage check.
# The sourcing script sets `wino` (the binary) and `verb` (the verb under test).
passed=0
failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL $*"; }

# expect_usage_error NAME ARGS...: `wino VERB ARGS` exits 2 with one stderr line, empty stdout.
expect_usage_error() {
    local name=$1
    shift
    "$wino" "$verb" "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$? lines
    lines=$(wc -l <"$tmp/err")
    if [ "$rc" -eq 2 ] && [ "$lines" -eq 1 ] && [ ! -s "$tmp/out" ]; then
        ok
    else
        fail "$name: exit $rc, $lines stderr lines (wino $verb $*)"
        cat "$tmp/err"
    fi
}

# expect_usage_message NAME PATTERN ARGS...: as expect_usage_error, and the stderr line matches
# the extended regular expression PATTERN.
expect_usage_message() {
    local name=$1 pattern=$2
    shift 2
    "$wino" "$verb" "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$? lines
    lines=$(wc -l <"$tmp/err")
    if [ "$rc" -eq 2 ] && [ "$lines" -eq 1 ] && [ ! -s "$tmp/out" ] &&
        grep -Eq -- "$pattern" "$tmp/err"; then
        ok
    else
        fail "$name: exit $rc, $lines stderr lines, expected /$pattern/ (wino $verb $*)"
        cat "$tmp/err"
    fi
}
