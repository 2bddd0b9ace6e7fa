#!/usr/bin/env bash
# Builds wino for Hopper (sm_90), runs the GPU tests (tests/gpu, CTest label "gpu") and the GPU
# benchmarks, and writes the results under $OUT (default: ./gpu-out):
#   gpu-check.csv  date,commit,device,test,result,ms   (one row per GPU test)
#   gpu-check.log  the full build and test output
#   gpu-transforms.csv  stage,tile,result,worst_error_over_scale of the generated CUDA transforms
# The commit is taken from git, or from WINO_COMMIT where the tree travels without .git.
# GMP: a machine without libgmp-dev can provide gmp.h and libgmp.a in .gpu-deps/{include,lib}.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu-out}
mkdir -p "$out"
log="$out/gpu-check.log"
gmp=()
if [ -f .gpu-deps/include/gmp.h ]; then
  gmp=(-DGMP_INCLUDE_DIR="$PWD/.gpu-deps/include" -DGMP_LIBRARY="$PWD/.gpu-deps/lib/libgmp.a")
fi
{
  cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DWINO_GPU_TESTS=ON "${gmp[@]}" &&
  cmake --build build-gpu -j"$(nproc)"
} >"$log" 2>&1 || { tail -n 40 "$log"; echo "gpu-check: build failed"; exit 1; }

device=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
date=$(date -u +%Y-%m-%d)
commit=${WINO_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
csv="$out/gpu-check.csv"
echo "date,commit,device,test,result,ms" >"$csv"
status=0
for t in $(ctest --test-dir build-gpu -L gpu -N | sed -n 's/^ *Test *#[0-9]*: //p'); do
  start=$(date +%s%N)
  if build-gpu/"$t" >>"$log" 2>&1; then result=pass; else result=fail; status=1; fi
  echo "$date,$commit,$device,$t,$result,$((($(date +%s%N) - start) / 1000000))" >>"$csv"
done
sed -nE 's/^(input|filter|output) +([^:]+): (PASS|FAIL) \(worst error \/ scale ([0-9.e+-]+)\)/\1,\2,\3,\4/p' \
  "$log" | { echo "stage,tile,result,worst_error_over_scale"; cat; } >"$out/gpu-transforms.csv"
# GPU benchmarks join here as the CUDA backend grows (wino bench --backend cuda ...).
cat "$csv"
exit $status
