#!/usr/bin/env bash
# The GPU check: for a machine with a CUDA device (one H200 in the plan: a copy
# of the working tree, the CUDA driver and toolkit, no network). Builds the
# CUDA build for sm_90, runs the `gpu` label (the differential properties on
# the device), runs the CUDA benchmarks against a device-to-device copy, and
# prints a summary. Every step has its own time limit; the whole script stays
# within 8 minutes.
#
#   scripts/gpu-check.sh [BUILD_DIR]        (default build/gpu-check)
#
# Output: the summary on stdout, the logs in BUILD_DIR/gpu-check/, and, when
# $OUT is set (the device tool's output folder), a copy of them there.
# Exit status: 0 when everything ran and passed, 1 when a step failed,
# 77 when there is no device (the build is still checked).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/gpu-check}
logs=$build/gpu-check
mkdir -p "$logs"
jobs=$(nproc)
start=$(date +%s)
status=0
summary=()
note() { summary+=("$1"); echo "== $1"; }
elapsed() { echo $(( $(date +%s) - start ))s; }

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >"$logs/device.txt" 2>&1 \
  && note "device: $(head -1 "$logs/device.txt")" || note "device: none (nvidia-smi: $(head -1 "$logs/device.txt"))"

# 1. Configure and build (sm_90 only; tests and benchmarks; no CLI).
if timeout 240 cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
     -DSEQPACK_ENABLE_CUDA=ON -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc -DSEQPACK_CUDA_ARCHITECTURES=90-real \
     -DSEQPACK_BUILD_TESTS=ON -DSEQPACK_BUILD_CLI=OFF -DSEQPACK_BUILD_BENCH=ON >"$logs/configure.log" 2>&1 &&
   timeout 240 cmake --build "$build" -j "$jobs" --target gpu_differential_cuda pack_bench_cuda >"$logs/build.log" 2>&1; then
  note "build: gpu_differential_cuda and pack_bench_cuda for sm_90 ($(elapsed))"
else
  note "build: FAILED, see $logs/configure.log and build.log ($(elapsed))"
  tail -30 "$logs/build.log" 2>/dev/null
  status=1
fi

# 2. The differential properties on the device (label gpu). Without a device
#    they report one skipped test.
if [[ $status == 0 ]]; then
  RC_PARAMS=${RC_PARAMS:-"max_success=300 max_size=100"} timeout 150 ctest --test-dir "$build" -L gpu \
    --output-on-failure -j 1 >"$logs/ctest.log" 2>&1
  rc=$?
  note "ctest -L gpu: $(grep -E 'tests passed|tests failed' "$logs/ctest.log" | tail -1) (rc $rc, $(elapsed))"
  if grep -q "cuda.Device.IsPresent (Skipped)" "$logs/ctest.log"; then
    note "no CUDA device: the properties were skipped"
    status=77
  elif [[ $rc != 0 ]]; then
    status=1
    tail -40 "$logs/ctest.log"
  fi
fi

# 3. Benchmarks: data path against a device-to-device copy of the same bytes.
if [[ $status == 0 ]]; then
  timeout 120 "$build/bench/pack_bench_cuda" --benchmark_min_time=0.2 --benchmark_format=json \
    >"$logs/bench.json" 2>"$logs/bench.err"
  rc=$?
  if [[ $rc == 0 ]]; then
    python3 - "$logs/bench.json" <<'PY' | tee "$logs/bench.md"
import json, sys
runs = {b["name"]: b["real_time"] for b in json.load(open(sys.argv[1]))["benchmarks"]}
print("| shape | op | implementation | time (us) | share of the D2D copy bandwidth |")
print("| --- | --- | --- | --- | --- |")
for shape in ("8x(300+4000)x1024B", "64x(200+2000)x256B", "1x(12+100)x32B"):
    base = runs["memcpy/" + shape]
    print(f"| {shape} | device-to-device copy | - | {base:.1f} | 100% |")
    for op in ("pack", "get_all_seq"):
        t = runs[f"{op}/gpu/{shape}"]
        print(f"| {shape} | {op} | gpu (CUDA) | {t:.1f} | {100 * base / t:.0f}% |")
    for impl in ("reference", "gpu"):
        print(f"| {shape} | metadata | {impl} | {runs[f'metadata/{impl}/{shape}']:.1f} | - |")
PY
    note "benchmarks: $logs/bench.md ($(elapsed))"
  else
    note "benchmarks: FAILED rc $rc ($(head -3 "$logs/bench.err"))"
    status=1
  fi
fi

echo
echo "# GPU check summary ($(elapsed) in all, exit $status)"
printf -- '- %s\n' "${summary[@]}"
if [[ -n "${OUT:-}" ]]; then cp -r "$logs" "$OUT/" 2>/dev/null; fi
exit $status
