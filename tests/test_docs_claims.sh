#!/usr/bin/env bash
# The prose of docs/transform-ops.md quotes reductions from its generated tables ("85.7% for
# F(2x2, 3x3)", "19 of the 27 tiles"): each quoted figure must equal the table it comes from, so
# that a change of points or recipes cannot leave a stale number behind.
# Usage: bash tests/test_docs_claims.sh [PATH_TO_WINO]   (from the repository root; wino unused)
set -eu
python3 - docs/transform-ops.md <<'EOF'
import re, sys

text = open(sys.argv[1]).read()
prose, _, generated = text.partition("<!-- BEGIN generated")

tables = {}  # "input" -> {tile: fewer-ops percent}
for name, body in re.findall(r"### (\w+) transform[^\n]*\n(.*?)(?=\n###|\n<!--|\Z)", generated, re.S):
    rows = [r.split("|") for r in body.splitlines() if r.startswith("| F(")]
    tables[name] = {r[1].strip(): float(r[8]) for r in rows}

passed = failed = 0
def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL", what)

for m in re.finditer(r"^- \*\*(\w+) transform(.*?)(?=^- |^$)", prose, re.M | re.S):
    table = tables[m.group(1).lower()]
    body = m.group(2)
    for pct, tile in re.findall(r"(\d+\.\d)%,? for (F\(\d+x\d+, \d+x\d+\))", body):
        check(abs(table[tile] - float(pct)) < 0.05,
              f"{m.group(1)} transform: prose says {pct}% for {tile}, the table {table[tile]}%")
    count = re.search(r"(\d+) of (?:the )?(\d+)(?: tiles)? (?:lose more than|above) 62%", body)
    if count:
        above = sum(v > 62.0 for v in table.values())
        check(int(count.group(1)) == above and int(count.group(2)) == len(table),
              f"{m.group(1)} transform: prose says {count.group(1)} of {count.group(2)} above 62%,"
              f" the table {above} of {len(table)}")
check(passed > 0, "no figure of the prose was found: the patterns are stale")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
EOF
