#!/usr/bin/env bash
# Installs what is missing, builds wino and runs the demo (extra arguments go to `wino demo`).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
build/wino demo "$@"
