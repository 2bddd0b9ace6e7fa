#!/usr/bin/env bash
# Builds wino for Hopper (sm_90), runs the GPU tests (tests/gpu, CTest label "gpu") and the GPU
# benchmarks, and writes the results under $OUT (default: ./gpu-out):
#   gpu-check.csv  date,commit,device,test,result,ms   (one row per GPU test, and per test
#                  and compute-sanitizer tool: memcheck, racecheck)
#   gpu-check.log  the full build and test output
#   gpu-transforms.csv  stage,tile,result,worst_error_over_scale of the generated CUDA transforms
#   bench_<dtype>_<set>[_b<N>][_<op>].csv  `wino bench --backend cuda` for each line of
#                  WINO_GPU_BENCH ("dtype set [batch] [op]" separated by ';', op fwd (default),
#                  bwd-data or bwd-filter, e.g. "int8 deeplabv3-r18; f32 eurosys20 5;
#                  f32 winrs-bfc 32 bwd-filter; f16 resnet18 bwd-data"),
#                  then the rows of scripts/torch_baseline.py (impl torch) for the same layers,
#                  appended right after in the same run (int8: torch's FP16)
#   tune_opencl_<set>[_b<N>].txt, bench_opencl_<set>[_b<N>].csv  for each line of
#                  WINO_GPU_OPENCL_BENCH ("set [batch]" separated by ';', e.g. "eurosys20 1;
#                  eurosys20 5; resnet18 32"): `wino tune --backend opencl` on the GPU through
#                  NVIDIA's OpenCL (WINO_GPU_OPENCL_BUDGET seconds per layer, default 30) into
#                  opencl_tuning.txt, then `wino bench --backend opencl` following it (rows
#                  wino-opencl and wino-opencl-tuned, non-fused and fused)
#   pytest.log     the Python package's tests (tests/python, and tests/python_gpu on the GPU)
#                  against the shared libraries of this build, a row "pytest" in gpu-check.csv
#                  (pytest from .gpu-deps/wheels when the machine has none)
#   train_<dtype>_<set>[_b<N>].csv  scripts/torch_train_bench.py: a training step of each layer,
#                  torch.nn.Conv2d against wino.torch.Conv2d, for each line of WINO_GPU_TRAIN
#                  ("dtype set [batch]" separated by ';'); train_..._kernels.csv: the GPU
#                  kernels of a step of each (torch.profiler)
#   ddp_<dtype>.json, ddp_<dtype>.csv  python -m wino.experiments.ddp under torchrun, one process
#                  per GPU (NCCL), for each dtype of WINO_GPU_DDP (e.g. "f32 bf16 f16") on a
#                  machine with two or more GPUs: DDP training checked against one process, and
#                  step times for 1 and all GPUs, torch.nn.Conv2d against wino.torch.Conv2d
#   wat.json, wat.csv, wat.log  python -m wino.experiments.wat with the arguments in WINO_GPU_WAT
#                  (e.g. "--seeds 1 --first-seed 2"), Fashion-MNIST from .gpu-deps/fashion-mnist
#   profile_<dtype>_<name>.csv  Nsight Compute per kernel (duration, DRAM bytes, SM and DRAM
#                  throughput in % of peak, warp instructions) of `wino bench` on one layer,
#                  for each line of WINO_GPU_PROFILE ("dtype name N C H W K" separated by ';',
#                  3x3 filters, pad 1)
# WINO_GPU_CPU_TESTS=1 also runs the CPU tests (ctest without the gpu label) on this machine's
# CPU, rows "cpu TEST" in gpu-check.csv, with the CPU's ISA in gpu-check.log (where it has
# AVX-512 or AMX that the development machine lacks).
# WINO_GPU_SKIP_TESTS=1 builds and runs only the benches and the experiment (a later call on the
# same build, its tests already run); WINO_GPU_TEST_ONLY=REGEX runs only the GPU tests whose
# names match (and their sanitizer rows), without pytest.
# The commit is taken from git, or from WINO_COMMIT where the tree travels without .git.
# WINO_GPU_SANITIZE=0 leaves out the compute-sanitizer rows (minutes) for a quicker check; they
# run test_gpu_conv2d without its medium layers (WINO_GPU_TEST_SMALL).
# GMP: a machine without libgmp-dev can provide gmp.h and libgmp.so (or .a, not for the shared
# libraries) in .gpu-deps/{include,lib};
# cuDNN's headers may come the same way, its library from the Python wheel nvidia-cudnn.
# OpenCL's headers and loader may come in .gpu-ocl/{include,lib} (see below).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu-out}
mkdir -p "$out"
log="$out/gpu-check.log"
deps=()
if [ -f .gpu-deps/include/gmp.h ]; then # shared libraries need a PIC GMP: libgmp.so first
  gmp=$PWD/.gpu-deps/lib/libgmp.so
  [ -f "$gmp" ] || gmp=$PWD/.gpu-deps/lib/libgmp.a
  deps=(-DGMP_INCLUDE_DIR="$PWD/.gpu-deps/include" -DGMP_LIBRARY="$gmp")
fi
# (its package may be a namespace package, without __file__: its first path)
wheel=$(python3 -c 'import nvidia.cudnn as m; print(list(m.__path__)[0])' 2>/dev/null)
if [ -n "$wheel" ] && [ -f "$wheel/lib/libcudnn.so.9" ]; then
  mkdir -p build-gpu-cudnn && ln -sf "$wheel/lib/libcudnn.so.9" build-gpu-cudnn/libcudnn.so
  deps+=(-DCUDNN_LIBRARY="$PWD/build-gpu-cudnn/libcudnn.so")
  [ -f .gpu-deps/include/cudnn.h ] && deps+=(-DCUDNN_INCLUDE_DIR="$PWD/.gpu-deps/include")
  export LD_LIBRARY_PATH="$wheel/lib:${LD_LIBRARY_PATH:-}"
fi
# OpenCL: headers and the ICD loader from .gpu-ocl/{include,lib} where the machine has none, and
# NVIDIA's driver (libnvidia-opencl.so.1) registered through OCL_ICD_VENDORS where no ICD file
# names it; test_opencl and test_opencl_tune then run on the GPU (rows of their names), and so do
# the tune and bench of WINO_GPU_OPENCL_BENCH.
if [ -f .gpu-ocl/include/CL/cl.h ]; then
  deps+=(-DOpenCL_INCLUDE_DIR="$PWD/.gpu-ocl/include" -DOpenCL_LIBRARY="$PWD/.gpu-ocl/lib/libOpenCL.so.1")
  export LD_LIBRARY_PATH="$PWD/.gpu-ocl/lib:${LD_LIBRARY_PATH:-}"
fi
if ! grep -qs libnvidia-opencl /etc/OpenCL/vendors/*.icd; then
  mkdir -p build-gpu-icd && echo libnvidia-opencl.so.1 >build-gpu-icd/nvidia.icd
  export OCL_ICD_VENDORS="$PWD/build-gpu-icd" WINO_OPENCL_CACHE="$PWD/build-gpu-icd/cache"
fi
{
  cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DWINO_GPU_TESTS=ON -DWINO_BENCH_BASELINES=ON -DBUILD_SHARED_LIBS=ON "${deps[@]}" &&
  cmake --build build-gpu -j"$(nproc)"
} >"$log" 2>&1 || { tail -n 40 "$log"; echo "gpu-check: build failed"; exit 1; }

device=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
date=$(date -u +%Y-%m-%d)
commit=${WINO_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
csv="$out/gpu-check.csv"
echo "date,commit,device,test,result,ms" >"$csv"
status=0
tests=1
[ "${WINO_GPU_SKIP_TESTS:-0}" = 1 ] && tests=0
only=${WINO_GPU_TEST_ONLY:-.}
[ "$tests" = 1 ] && for t in $(ctest --test-dir build-gpu -L gpu -N | sed -n 's/^ *Test *#[0-9]*: //p' |
  grep -E "$only"); do
  start=$(date +%s%N)
  if build-gpu/"$t" >>"$log" 2>&1; then result=pass; else result=fail; status=1; fi
  echo "$date,$commit,$device,$t,$result,$((($(date +%s%N) - start) / 1000000))" >>"$csv"
done
for t in test_opencl test_opencl_tune; do
  [ "$tests" = 1 ] && [ -x "build-gpu/$t" ] && [[ $t =~ $only ]] || continue
  start=$(date +%s%N)
  if "build-gpu/$t" >>"$log" 2>&1; then result=pass; else result=fail status=1; fi
  echo "$date,$commit,$device,$t,$result,$((($(date +%s%N) - start) / 1000000))" >>"$csv"
done
if [ "$tests" = 1 ] && [ "${WINO_GPU_CPU_TESTS:-0}" = 1 ]; then
  grep -m1 -o -w -E 'amx_tile|avx512f' /proc/cpuinfo | sort -u | tr '\n' ' ' >>"$log"
  for t in $(ctest --test-dir build-gpu -LE gpu -N | sed -n 's/^ *Test *#[0-9]*: //p'); do
    start=$(date +%s%N)
    if ctest --test-dir build-gpu -R "^$t\$" --output-on-failure >>"$log" 2>&1; then
      result=pass
    else
      result=fail status=1
    fi
    echo "$date,$commit,$device,cpu $t,$result,$((($(date +%s%N) - start) / 1000000))" >>"$csv"
  done
fi
sed -nE 's/^(input|filter|output) +([^:]+): (PASS|FAIL) \(worst error \/ scale ([0-9.e+-]+)\)/\1,\2,\3,\4/p' \
  "$log" | { echo "stage,tile,result,worst_error_over_scale"; cat; } >"$out/gpu-transforms.csv"
# compute-sanitizer's memcheck and racecheck over the backend's tests, as rows "TEST (TOOL)".
if [ "$tests" = 1 ] && [ "${WINO_GPU_SANITIZE:-1}" != 0 ] && command -v compute-sanitizer >/dev/null; then
  for t in test_gpu_bad_input test_gpu_int8 test_gpu_conv2d test_gpu_graph test_gpu_streams \
    test_gpu_backward_data test_gpu_backward_filter test_gpu_vendor test_gpu_rows; do
    [[ $t =~ $only ]] || continue
    for tool in memcheck racecheck; do
      start=$(date +%s%N)
      if WINO_GPU_TEST_SMALL=1 compute-sanitizer --tool "$tool" --error-exitcode 9 "build-gpu/$t" \
        >>"$log" 2>&1; then
        result=pass
      else
        result=fail status=1
      fi
      echo "$date,$commit,$device,$t ($tool),$result,$((($(date +%s%N) - start) / 1000000))" >>"$csv"
    done
  done
fi
have_torch=0
python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null && have_torch=1
if [ "$have_torch" = 1 ] && [ "$tests" = 1 ] && [ "$only" = . ]; then
  python3 -c 'import pytest' 2>/dev/null ||
    python3 -m pip install -q --no-index --find-links .gpu-deps/wheels pytest >>"$log" 2>&1
  start=$(date +%s%N)
  if WINO_LIBRARY_DIR=$PWD/build-gpu PYTHONPATH=$PWD/python python3 -m pytest -q \
    tests/python tests/python_gpu >"$out/pytest.log" 2>&1; then
    result=pass
  else
    result=fail status=1
  fi
  echo "$date,$commit,$device,pytest,$result,$((($(date +%s%N) - start) / 1000000))" >>"$csv"
  tail -n 3 "$out/pytest.log"
fi
cat "$csv"
IFS=';' read -ra benches <<<"${WINO_GPU_BENCH:-}"
[ "$have_torch" = 1 ] || [ -z "${WINO_GPU_BENCH:-}" ] ||
  echo "gpu-check: no PyTorch with CUDA here: the benches have no torch rows"
for b in "${benches[@]}"; do
  read -r dtype set batch op <<<"$b"
  [ -n "${dtype:-}" ] || continue
  case "${batch:-}" in [!0-9]*) op=$batch batch= ;; esac # "dtype set op"
  name="bench_${dtype}_${set}${batch:+_b$batch}${op:+_$op}"
  build-gpu/wino bench --backend cuda --dtype "$dtype" --set "$set" ${batch:+--batch "$batch"} \
    ${op:+--op "$op"} --csv >"$out/$name.csv" 2>"$out/$name.err" || status=1
  # what a PyTorch user gets, in the same run and CSV (impl = torch; int8: torch's FP16)
  if [ "$have_torch" = 1 ]; then
    python3 scripts/torch_baseline.py --set "$set" --dtype "$dtype" ${batch:+--batch "$batch"} \
      ${op:+--op "$op"} --append "$out/$name.csv" 2>>"$out/$name.err" || status=1
  fi
  echo "$name: $(($(wc -l <"$out/$name.csv") - 1)) rows; $(tail -n 1 "$out/$name.err")"
done
IFS=';' read -ra ocl_benches <<<"${WINO_GPU_OPENCL_BENCH:-}"
for b in "${ocl_benches[@]}"; do
  read -r set batch <<<"$b"
  [ -n "${set:-}" ] || continue
  name="opencl_${set}${batch:+_b$batch}"
  build-gpu/wino tune --backend opencl --set "$set" ${batch:+--batch "$batch"} \
    --budget "${WINO_GPU_OPENCL_BUDGET:-30}" --cache "$out/opencl_tuning.txt" \
    >"$out/tune_$name.txt" 2>"$out/tune_$name.err" || status=1
  build-gpu/wino bench --backend opencl --set "$set" ${batch:+--batch "$batch"} \
    --tuning-cache "$out/opencl_tuning.txt" --csv >"$out/bench_$name.csv" \
    2>"$out/bench_$name.err" || status=1
  echo "$name: $(($(wc -l <"$out/tune_$name.txt") - 1)) layers tuned, $(($(wc -l \
    <"$out/bench_$name.csv") - 1)) rows; $(tail -n 1 "$out/bench_$name.err")"
done
IFS=';' read -ra trains <<<"${WINO_GPU_TRAIN:-}"
for t in "${trains[@]}"; do
  read -r dtype set batch <<<"$t"
  [ -n "${dtype:-}" ] && [ "$have_torch" = 1 ] || continue
  name="train_${dtype}_${set}${batch:+_b$batch}"
  WINO_LIBRARY_DIR=$PWD/build-gpu PYTHONPATH=$PWD/python python3 scripts/torch_train_bench.py \
    --set "$set" --dtype "$dtype" ${batch:+--batch "$batch"} --out "$out/$name.csv" \
    --kernels "$out/${name}_kernels.csv" 2>"$out/$name.err" || status=1
  echo "$name: $(($(wc -l <"$out/$name.csv") - 1)) rows; $(tail -n 1 "$out/$name.err")"
done
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
for dtype in ${WINO_GPU_DDP:-}; do
  [ "$have_torch" = 1 ] && [ "$gpus" -ge 2 ] || { echo "gpu-check: DDP needs two GPUs"; break; }
  WINO_COMMIT=$commit WINO_LIBRARY_DIR=$PWD/build-gpu PYTHONPATH=$PWD/python \
    python3 -m torch.distributed.run \
    --nproc_per_node="$gpus" -m wino.experiments.ddp --dtype "$dtype" --out "$out/ddp_$dtype" \
    >>"$log" 2>&1 || status=1
  echo "ddp_$dtype: $(tail -n +2 "$out/ddp_$dtype.csv" 2>/dev/null | wc -l) rows"
done
if [ -n "${WINO_GPU_WAT:-}" ] && [ "$have_torch" = 1 ]; then
  # shellcheck disable=SC2086 # the arguments split as on a command line
  WINO_LIBRARY_DIR=$PWD/build-gpu PYTHONPATH=$PWD/python python3 -m wino.experiments.wat \
    $WINO_GPU_WAT --data-dir .gpu-deps/fashion-mnist --out "$out/wat.json" >"$out/wat.log" 2>&1 ||
    status=1
  tail -n 16 "$out/wat.log"
fi
# ncu's raw page (between the bench's own lines) -> kernel,grid,block and the four metrics
ncu_columns='
import csv, io, sys
rows = list(csv.reader(io.StringIO("".join(l for l in sys.stdin if l.startswith("\"")))))
keep = ["Kernel Name", "Grid Size", "Block Size", "gpu__time_duration.sum", "dram__bytes.sum",
        "sm__throughput.avg.pct_of_peak_sustained_elapsed",
        "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", "smsp__inst_executed.sum"]
at = [rows[0].index(k) for k in keep]
out = csv.writer(sys.stdout)
out.writerow(["kernel", "grid", "block", "ns", "dram_bytes", "sm_pct", "dram_pct", "warp_insts"])
for r in rows[2:]:
    out.writerow([r[i].replace(",", "") if i in at[3:] else r[i] for i in at])
'
IFS=';' read -ra profiles <<<"${WINO_GPU_PROFILE:-}"
for p in "${profiles[@]}"; do
  read -r dtype name n c h w k <<<"$p"
  [ -n "${k:-}" ] || continue
  sets=$(mktemp -d)
  echo "$name $n $c $h $w $k 3 3 1 1" >"$sets/profile.txt"
  ncu --csv --page raw --metrics gpu__time_duration.sum,dram__bytes.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum \
    build-gpu/wino bench --backend cuda --dtype "$dtype" --set profile --sets-dir "$sets" \
    --reps 1 --warmup 0 >"$sets/raw.txt" 2>>"$log" || status=1
  python3 -c "$ncu_columns" <"$sets/raw.txt" >"$out/profile_${dtype}_$name.csv" || status=1
  echo "profile_${dtype}_$name: $(($(wc -l <"$out/profile_${dtype}_$name.csv") - 1)) kernels"
  rm -rf "$sets"
done
exit $status
