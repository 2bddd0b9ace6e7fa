#!/usr/bin/env bash
# Installs what is missing, builds wino and runs the demo (extra arguments go to `wino demo`).
# On a terminal the build shows its progress on one line; in a log it stays quiet.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
if [ -t 2 ]; then
  echo "Building wino (minutes the first time) ..." >&2
  width=$(($(tput cols 2>/dev/null || echo 80) - 1))
  cmake --build build -j"$(nproc)" | while IFS= read -r line; do
    case "$line" in '['*) printf '\r\033[K%s' "${line:0:$width}" >&2 ;; esac # "[ 42%] ..."
  done
  printf '\r\033[K' >&2
else
  cmake --build build -j"$(nproc)" >/dev/null
fi
build/wino demo "$@"
