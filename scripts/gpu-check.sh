#!/usr/bin/env bash
# The GPU check: one bounded run on a machine with one CUDA device (an H200 in
# the plan: a copy of the working tree, the driver and toolkit, no network,
# about 10 minutes of wall time for everything). It stays within a deadline,
# writes its logs from the first second, and ends with a summary and the
# worst exit code of its steps.
#
#   scripts/gpu-check.sh [--dry-run] [--prebuilt DIR] [--budget SECONDS]
#
# Steps, each with its own cap; a step's timeout is min(cap, time left before
# the deadline), and a step with less than 15 s left is skipped:
#   preflight  nvidia-smi and nvcc --version logged, the driver's CUDA version
#              against the toolkit's, cmake/ninja/python3 and the headers the
#              build needs, whether compute-sanitizer exists
#   build      configure without LibTorch (tests and benchmarks, sm_90 only)
#              and build gpu_differential_cuda and pack_bench_cuda with every
#              core; or, with --prebuilt DIR, the binaries already built in DIR
#              (preset cuda-sm90 built elsewhere, the folder carried over)
#   smoke      the differential binary, few cases, no shrinking, the
#              synchronising device check on
#   ctest      ctest -L gpu --no-tests=error with per-test timeouts (prebuilt:
#              each test of the binary run directly with its own timeout); the
#              RapidCheck seeds and Falsifiable lines go into the summary
#   bench      pack_bench_cuda filtered to what the table reads; the table as
#              ratios to the device-to-device copy
#   memcheck,  compute-sanitizer on a few small cases, when it exists and
#   racecheck  time is left
#
# --dry-run (and any run on a machine without a device) walks every step that
# needs no GPU for real (preflight but the device, the build's preconditions,
# the deadline arithmetic) and, for the steps that need one, logs the command
# it would run and advances a simulated clock by the step's planned duration,
# so that the deadline logic runs as in a real run. CTest runs it
# (tests/scripts/gpu_check_dry_run_test.sh).
#
# Logs: ${OUT:-build}/gpu-check/ (OUT is the device tool's output folder):
# run.log (every step's start, end, timeout, exit), one log per step,
# summary.md (rewritten after every step, so a kill loses nothing).
#
# Exit status, worst wins (higher is worse):
#   0 everything ran and passed (a dry run: every step it can walk passed)
#   3 no CUDA device (the dry run's walk passed)
#   4 a dependency is missing or too old (tool, header, driver, library)
#   5 the deadline left a step out
#   6 a step ran out of time
#   7 a step failed (build, a test, a benchmark, a sanitizer error)
#   2 usage
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dry_run=0
prebuilt=""
budget=${SEQPACK_GPU_CHECK_BUDGET:-540}
while [[ $# -gt 0 ]]; do
  case $1 in
    --dry-run) dry_run=1 ;;
    --prebuilt) prebuilt=${2:-}; shift ;;
    --budget) budget=${2:-}; shift ;;
    -h|--help) sed -n '2,46p' "$0"; exit 0 ;;
    *) echo "gpu-check: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
if ! [[ $budget =~ ^[0-9]+$ ]] || (( budget < 1 || budget > 3600 )); then
  echo "gpu-check: --budget must be a whole number of seconds in [1, 3600], got '$budget'" >&2
  exit 2
fi

logs=${OUT:-$root/build}/gpu-check
mkdir -p "$logs" || { echo "gpu-check: cannot create $logs" >&2; exit 4; }
: >"$logs/run.log"
start=$(date +%s)
skew=0  # the simulated clock of a dry run: seconds of GPU steps not run
now() { echo $(( $(date +%s) + skew )); }
deadline=$(( start + budget ))
elapsed() { echo "$(( $(now) - start ))s"; }
worst=0
summary=()
seeds=()
falsifiable=()
log() { echo "[$(elapsed)] $*" | tee -a "$logs/run.log"; }
raise() { (( $1 > worst )) && worst=$1; return 0; }
write_summary() {
  {
    echo "# GPU check summary ($(elapsed) of ${budget}s, exit $worst$([[ $dry_run == 1 ]] && echo ', dry run'))"
    echo
    printf -- '- %s\n' "${summary[@]}"
    if (( ${#seeds[@]} )); then echo; echo "RapidCheck seeds:"; printf -- '- %s\n' "${seeds[@]}"; fi
    if (( ${#falsifiable[@]} )); then echo; echo "Falsifiable:"; printf -- '- %s\n' "${falsifiable[@]}"; fi
  } >"$logs/summary.md"
}
note() { summary+=("$1"); log "$1"; write_summary; }
log "gpu-check in $root, logs in $logs, budget ${budget}s$([[ $dry_run == 1 ]] && echo ', dry run')"

# run_step NAME CAP PLANNED NEEDS_GPU CMD...: runs CMD with its output in
# NAME.log and a timeout of min(CAP, time left); records the outcome. A dry
# run does not run a step that needs a GPU: it logs the command and moves the
# clock on by PLANNED seconds. Returns the command's status (0 when simulated,
# 125 when skipped).
min_step=15
run_step() {
  local name=$1 cap=$2 planned=$3 gpu=$4
  shift 4
  local left=$(( deadline - $(now) ))
  if (( left < min_step )); then
    note "$name: skipped, ${left}s left before the deadline (needs at least ${min_step}s)"
    raise 5
    return 125
  fi
  local t=$(( cap < left ? cap : left ))
  log "$name: start, timeout ${t}s (cap ${cap}s, ${left}s left): $*"
  if [[ $dry_run == 1 && $gpu == 1 ]]; then
    printf '%s\n' "dry run: would run with timeout ${t}s:" "$*" >"$logs/$name.log"
    if (( planned > t )); then  # the planned duration does not fit: a simulated timeout
      skew=$(( skew + t ))
      note "$name: TIMED OUT after ${t}s (dry run: planned ${planned}s)"
      raise 6
      return 124
    fi
    skew=$(( skew + planned ))
    note "$name: dry run, not run (needs the GPU or the build); ${planned}s of the clock spent as planned"
    return 0
  fi
  local t0 rc
  t0=$(now)
  timeout --kill-after=10 "$t" "$@" >"$logs/$name.log" 2>&1
  rc=$?
  if (( rc == 124 || rc == 137 )); then
    note "$name: TIMED OUT after ${t}s (log $name.log)"
    raise 6
  elif (( rc != 0 )); then
    log "$name: exit $rc in $(( $(now) - t0 ))s"
  else
    log "$name: passed in $(( $(now) - t0 ))s"
  fi
  return $rc
}

# ---------------------------------------------------------------------------
# Preflight.
device=0
missing=()
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi >"$logs/nvidia-smi.log" 2>&1; then
  device=1
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >>"$logs/nvidia-smi.log" 2>&1
  note "device: $(tail -1 "$logs/nvidia-smi.log")"
else
  echo "nvidia-smi: $(command -v nvidia-smi || echo absent)" >>"$logs/nvidia-smi.log"
  note "device: none (nvidia-smi absent or failing; see nvidia-smi.log)"
fi
nvcc=${CUDACXX:-/usr/local/cuda/bin/nvcc}
toolkit=""
if [[ -x $nvcc ]]; then
  "$nvcc" --version >"$logs/nvcc.log" 2>&1
  toolkit=$(grep -o 'release [0-9]*\.[0-9]*' "$logs/nvcc.log" | cut -d' ' -f2)
  note "toolkit: nvcc $toolkit ($nvcc)"
elif [[ -z $prebuilt ]]; then
  missing+=("nvcc ($nvcc)")
fi
if [[ $device == 1 && -n $toolkit ]]; then
  driver_cuda=$(grep -o 'CUDA Version: [0-9]*\.[0-9]*' "$logs/nvidia-smi.log" | head -1 | cut -d' ' -f3)
  if [[ -z $driver_cuda ]]; then
    note "driver: its CUDA version is not in nvidia-smi's output; not compared"
  elif (( ${driver_cuda%.*} < ${toolkit%.*} )); then
    missing+=("a driver for CUDA $toolkit (the driver supports CUDA $driver_cuda)")
  elif (( ${driver_cuda%.*} == ${toolkit%.*} && ${driver_cuda#*.} < ${toolkit#*.} )); then
    note "driver: CUDA $driver_cuda, older minor than the toolkit's $toolkit (minor-version compatibility; SASS for sm_90 runs)"
  else
    note "driver: CUDA $driver_cuda supports the toolkit's $toolkit"
  fi
fi
for tool in cmake ninja python3 timeout; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if [[ -z $prebuilt ]]; then
  for header in gtest/gtest.h rapidcheck.h nlohmann/json.hpp benchmark/benchmark.h; do
    [[ -f /usr/include/$header ]] || missing+=("header $header")
  done
  [[ -f /usr/local/cuda/include/cccl/thrust/version.h || -f /usr/local/cuda/include/thrust/version.h ]] ||
    missing+=("header thrust/version.h (CCCL)")
fi
sanitizer=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null || true)}
note "compute-sanitizer: ${sanitizer:-absent (the memcheck and racecheck steps will be skipped)}"

# The route: binaries built elsewhere (preset cuda-sm90, carried), or a build here.
if [[ -n $prebuilt ]]; then
  build=$prebuilt
  route="prebuilt in $prebuilt"
else
  build=$root/build/gpu-check
  route="built here in $build"
fi
diff_bin=$build/tests/gpu/gpu_differential_cuda
bench_bin=$build/bench/pack_bench_cuda
if [[ -n $prebuilt ]]; then
  for bin in "$diff_bin" "$bench_bin"; do
    if [[ ! -x $bin ]]; then
      missing+=("prebuilt binary $bin")
    elif ldd "$bin" 2>/dev/null | grep -q 'not found'; then
      missing+=("libraries of $bin: $(ldd "$bin" | grep 'not found' | tr -s ' \t' ' ' | tr '\n' ';')")
    fi
  done
fi
# What the build route relies on in the tree: the preset and the two targets.
grep -q '"name": "cuda-sm90"' "$root/CMakePresets.json" || missing+=("preset cuda-sm90 in CMakePresets.json")
grep -q 'add_executable(gpu_differential_cuda' "$root/tests/gpu/CMakeLists.txt" || missing+=("target gpu_differential_cuda")
grep -q 'add_executable(pack_bench_cuda' "$root/bench/CMakeLists.txt" || missing+=("target pack_bench_cuda")

if (( ${#missing[@]} )); then
  for m in "${missing[@]}"; do note "MISSING: $m"; done
  raise 4
  note "preflight: a dependency is missing; nothing else runs"
  write_summary
  cat "$logs/summary.md"
  exit $worst
fi
if [[ $device == 0 && $dry_run == 0 ]]; then
  note "no CUDA device: running as a dry run (exit 3 if its walk passes)"
  dry_run=1
  no_device_exit=1
fi
note "preflight: passed; route: $route"

# ---------------------------------------------------------------------------
# Build (or check the prebuilt binaries).
built=0
if [[ -n $prebuilt ]]; then
  note "build: none, prebuilt binaries in $prebuilt (preset cuda-sm90 built before this run)"
  built=1
else
  jobs=$(nproc)
  t0=$(now)
  if run_step configure 120 40 1 cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
       -DSEQPACK_ENABLE_CUDA=ON -DCMAKE_CUDA_COMPILER="$nvcc" -DSEQPACK_CUDA_ARCHITECTURES=90-real \
       -DSEQPACK_BUILD_TESTS=ON -DSEQPACK_BUILD_BENCH=ON -DSEQPACK_BUILD_TORCH=OFF -DSEQPACK_BUILD_CLI=OFF \
       -DSEQPACK_BUILD_FUZZ=OFF &&
     run_step build 300 200 1 cmake --build "$build" -j "$jobs" --target gpu_differential_cuda pack_bench_cuda; then
    built=1
    note "build: gpu_differential_cuda and pack_bench_cuda for sm_90 with $jobs jobs in $(( $(now) - t0 ))s"
  else
    note "build: FAILED or left out (configure.log, build.log)"
    tail -30 "$logs/build.log" 2>/dev/null
    raise 7
  fi
fi

# ---------------------------------------------------------------------------
# Tests.
collect_rapidcheck() {  # seeds and Falsifiable lines of a log
  local line
  while IFS= read -r line; do seeds+=("$1: $line"); done < <(grep -o 'seed=[0-9]*' "$2" 2>/dev/null | sort -u)
  while IFS= read -r line; do falsifiable+=("$1: $line"); done < <(grep -A2 'Falsifiable\|device error' "$2" 2>/dev/null | head -30)
}
if [[ $built == 1 ]]; then
  # Few cases, no shrinking, the device check synchronising at every entry point.
  if run_step smoke 60 15 1 env RC_PARAMS="max_success=20 max_size=40 noshrink=1" SEQPACK_GPU_SYNC_CHECK=1 \
       "$diff_bin" --gtest_filter='GpuDifferential.BuildPackMatchesTheReference:GpuDifferential.EveryEntryPointRunsOnTheCallersStream:Device.*'; then
    [[ $dry_run == 1 ]] || note "smoke: passed ($(grep -c '^\[       OK \]' "$logs/smoke.log") tests)"
  else
    rc=$?
    (( rc == 124 || rc == 137 || rc == 125 )) || { note "smoke: FAILED, exit $rc (smoke.log)"; raise 7; }
  fi
  collect_rapidcheck smoke "$logs/smoke.log"

  if [[ -z $prebuilt ]]; then
    run_step ctest 240 120 1 ctest --test-dir "$build" -L gpu --no-tests=error --timeout 120 --output-on-failure -j 1
    rc=$?
  else
    # The carried build folder's CTest files name this machine's paths: run
    # each test of the binary directly, each with its own timeout.
    run_step ctest 240 120 1 bash -c '
      bin=$1; fail=0
      for t in $("$bin" --gtest_list_tests | awk "/^[^ ]/ {s=\$1} /^  / {print s \$1}"); do
        echo "== $t"; timeout 120 "$bin" --gtest_filter="$t" || { echo "FAILED: $t (exit $?)"; fail=1; }
      done
      exit $fail' _ "$diff_bin"
    rc=$?
  fi
  if [[ $dry_run == 0 ]]; then
    if grep -q 'cuda.Device.IsPresent.*Skipped\|no CUDA device on this machine' "$logs/ctest.log"; then
      note "ctest: the device was not usable by the binary: every property skipped"
      raise 7
    elif (( rc == 0 )); then
      note "ctest -L gpu: $(grep -E 'tests passed|tests failed' "$logs/ctest.log" | tail -1)"
    elif (( rc != 124 && rc != 137 && rc != 125 )); then
      note "ctest -L gpu: FAILED, exit $rc: $(grep -E 'tests passed|tests failed|FAILED' "$logs/ctest.log" | tail -3 | tr '\n' ' ')"
      raise 7
    fi
  fi
  collect_rapidcheck ctest "$logs/ctest.log"
  write_summary

  # Benchmarks: the shapes the table reads, each against a device-to-device copy.
  if run_step bench 120 40 1 "$bench_bin" --benchmark_filter='^(memcpy|pack/gpu|get_all_seq/gpu|metadata/gpu|metadata/reference)/[0-9]' \
       --benchmark_min_time=0.1 --benchmark_format=json --benchmark_out="$logs/bench.json"; then
    if [[ $dry_run == 0 ]]; then
      if python3 - "$logs/bench.json" >"$logs/bench.md" 2>>"$logs/bench.log" <<'PY'
import json, sys
runs = {b["name"]: b["real_time"] for b in json.load(open(sys.argv[1]))["benchmarks"]}
print("| shape | op | time (us) | D2D copy (us) | copy time / op time |")
print("| --- | --- | --- | --- | --- |")
for shape in ("8x(300+4000)x1024B", "64x(200+2000)x256B", "1x(12+100)x32B"):
    base = runs["memcpy/" + shape]
    for op in ("pack", "get_all_seq"):
        t = runs[f"{op}/gpu/{shape}"]
        print(f"| {shape} | {op} | {t:.1f} | {base:.1f} | {base / t:.2f} |")
    print(f"| {shape} | metadata (reference on the host / gpu) | {runs[f'metadata/gpu/{shape}']:.1f} | - | "
          f"{runs[f'metadata/reference/{shape}'] / runs[f'metadata/gpu/{shape}']:.2f} |")
PY
      then
        note "bench: ratios in bench.md"
        summary+=("$(cat "$logs/bench.md")")
        write_summary
      else
        note "bench: the table could not be made (bench.log)"
        raise 7
      fi
    fi
  else
    rc=$?
    (( rc == 124 || rc == 137 || rc == 125 )) || { note "bench: FAILED, exit $rc (bench.log)"; raise 7; }
  fi

  # compute-sanitizer on a few small cases.
  if [[ -n $sanitizer ]]; then
    for tool in memcheck racecheck; do
      if run_step "$tool" 90 60 1 env RC_PARAMS="max_success=5 max_size=20 noshrink=1" \
           "$sanitizer" --tool "$tool" --error-exitcode 9 "$diff_bin" \
           --gtest_filter='GpuDifferential.BuildPackMatchesTheReference:GpuDifferential.ViewsMatchTheReference'; then
        [[ $dry_run == 1 ]] || note "$tool: no errors"
      else
        rc=$?
        (( rc == 124 || rc == 137 || rc == 125 )) || { note "$tool: FAILED, exit $rc ($tool.log)"; raise 7; }
      fi
    done
  fi
fi

if [[ ${no_device_exit:-0} == 1 ]]; then
  raise 3
fi
note "end: worst exit $worst after $(elapsed)"
echo
cat "$logs/summary.md"
exit $worst
