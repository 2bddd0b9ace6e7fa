#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz (clang, ASan + UBSan) in build-fuzz and runs each for
# SECONDS (default 60) on a copy of its seed corpus. Fails on any crash, leak, timeout or
# sanitizer report; the inputs that failed are kept in build-fuzz/findings/. docs/fuzzing.md
# says how to run them for hours.
# Usage: scripts/fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
case $seconds in '' | *[!0-9]*) echo "usage: scripts/fuzz.sh [SECONDS]" >&2; exit 2 ;; esac

install() {
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "fuzz: installing $*"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@"
}

# 0 when clang links a program with these flags.
links() {
  local dir
  dir=$(mktemp -d)
  echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return d && n; }' \
    > "$dir/t.c"
  local rc=0
  clang "$@" "$dir/t.c" -o "$dir/t" > /dev/null 2>&1 || rc=1
  rm -rf "$dir"
  return $rc
}

missing=()
for pkg in clang cmake make libgmp-dev; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] || install "${missing[@]}"
# Debian ships libFuzzer and the sanitizer runtimes in libclang-rt-N-dev (only recommended by
# clang).
major=$(clang -dumpversion | cut -d. -f1)
links -fsanitize=fuzzer,address,undefined || install "libclang-rt-$major-dev"

CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Debug -DWINO_FUZZ=ON -DWINO_SANITIZE=ON \
  -DWINO_CUDA=OFF > /dev/null
cmake --build build-fuzz -j"$(nproc)" --target wino_fuzz

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
findings=build-fuzz/findings
passed=0
failed=0
for corpus in tests/fuzz/corpus/*/; do
  name=$(basename "$corpus")
  target=build-fuzz/tests/fuzz/fuzz_$name
  mkdir -p "$work/$name/corpus" "$work/$name/artifacts"
  cp "$corpus"* "$work/$name/corpus/"
  log=$work/$name/log
  rc=0
  # stdout closed: only the CLI's verbs print there. A leak, an abort or a sanitizer report
  # ends the run with a nonzero status and an artifact.
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    "$target" -max_total_time="$seconds" -timeout=60 -close_fd_mask=1 -print_final_stats=1 \
    -artifact_prefix="$work/$name/artifacts/" "$work/$name/corpus" > "$log" 2>&1 || rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
  if [ "$rc" -eq 0 ] && [ -z "$(ls -A "$work/$name/artifacts")" ]; then
    echo "fuzz_$name: ${runs:-0} runs, ${speed:-0} per second: passed"
    passed=$((passed + 1))
  else
    echo "fuzz_$name: FAILED (status $rc) after ${runs:-?} runs; the end of its log:"
    tail -n 60 "$log"
    mkdir -p "$findings"
    cp "$work/$name/artifacts/"* "$findings/" 2>/dev/null || true
    echo "fuzz_$name: failing inputs in $findings/ (replay: $target FILE)"
    failed=$((failed + 1))
  fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
