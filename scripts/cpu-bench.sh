#!/bin/bash
# The CPU FP32 benchmark runs behind docs/cpu-winograd.md: every layer set against oneDNN and
# OpenBLAS in one process per set, threads pinned, CSVs into DIR (default bench/results) named
# DATE_cpu-f32_SET[_bBATCH].csv.
# Usage: scripts/cpu-bench.sh [DIR] [THREADS]   (after building into build/)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-bench/results}
threads=${2:-2}
date=$(date +%F)
mkdir -p "$dir"
run() { # set batch-or-empty suffix
    local batch=()
    [ -n "$2" ] && batch=(--batch "$2")
    OMP_PROC_BIND=true ./build/wino bench --backend cpu --set "$1" "${batch[@]}" \
        --threads "$threads" --reps 15 --csv >"$dir/${date}_cpu-f32_$1$3.csv"
}
run resnet18 1 _b1
run resnet18 8 _b8
run vgg16 1 _b1
run vgg16 8 _b8
run eurosys20 "" ""
