#!/usr/bin/env bash
# Installs what is missing, builds wino (with the bench baselines found) and runs all tests: the
# C tests (ctest), then the Python package installed with pip and its tests (scripts/python-test.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DWINO_BENCH_BASELINES=ON
cmake --build build -j"$(nproc)"
ctest --test-dir build --output-on-failure -j"$(nproc)"
scripts/python-test.sh
