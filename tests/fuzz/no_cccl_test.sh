#!/usr/bin/env bash
# Fuzzing without the CUDA Toolkit (label package; configures only, seconds):
# .clusterfuzzlite/build.sh --configure-only with every Thrust hidden (the
# CUDA Toolkit's prefix and config folders ignored, Thrust_DIR and
# CMAKE_PREFIX_PATH unset) must say that it found no Thrust, turn the GPU
# library off, and leave fuzz_build_pack, fuzz_protocol, fuzz_large_pack and
# fuzz_port_answer configured, with CMake naming the two targets it skipped
# and why. Then the same configure with Thrust visible, where there is one,
# must fail that check (six targets, no skip message): the check can fail.
#   tests/fuzz/no_cccl_test.sh CXX_COMPILER WORK_DIR
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd -P)
cxx=$1 dir=$2
hide="-DCMAKE_IGNORE_PREFIX_PATH=/usr/local/cuda"
hide+=" -DCMAKE_IGNORE_PATH=/usr/local/cuda/lib64/cmake/thrust;/usr/local/cuda/lib/cmake/thrust;/usr/local/cuda/targets/x86_64-linux/lib/cmake/thrust"

configure() {  # NAME CMAKE_ARGS: configures in $dir/NAME, output in $dir/NAME.log
  rm -rf "${dir:?}/$1"
  mkdir -p "$dir/$1/out" "$dir/$1/work"
  env -u Thrust_DIR -u CMAKE_PREFIX_PATH -u SEQPACK_BUILD_GPU CC=cc CXX="$cxx" CFLAGS= CXXFLAGS= \
    LIB_FUZZING_ENGINE=-fsanitize=fuzzer SRC="$dir/$1" OUT="$dir/$1/out" WORK="$dir/$1/work" \
    SEQPACK_CMAKE_ARGS="$2" bash -eu "$root/.clusterfuzzlite/build.sh" --configure-only >"$dir/$1.log" 2>&1
}

check() {  # NAME: prints each problem as "no-cccl:", returns 1 if any
  local log="$dir/$1.log" build="$dir/$1/work/seqpack-build" bad=0 targets
  grep -q '^build.sh: Thrust (CCCL) not found' "$log" || { echo "no-cccl: build.sh did not report Thrust missing"; bad=1; }
  # CMake wraps the warning's lines; join them before matching.
  tr -s ' \n' ' ' <"$log" | grep -q 'skipped fuzz_differential and fuzz_context_parallel: they link seqpack::gpu_cpp, which is not built' ||
    { echo "no-cccl: CMake did not name the two skipped targets and why"; bad=1; }
  targets=$(cmake --build "$build" --target help | grep -oE '\bfuzz_[a-z_]+' | sort -u | tr '\n' ' ')
  [[ "$targets" == "fuzz_build_pack fuzz_large_pack fuzz_port_answer fuzz_protocol " ]] ||
    { echo "no-cccl: fuzz targets configured: $targets(want build_pack, large_pack, port_answer, protocol)"; bad=1; }
  grep -q '^SEQPACK_FUZZ_BUILT:INTERNAL=build_pack;protocol;large_pack;port_answer$' "$build/CMakeCache.txt" ||
    { echo "no-cccl: SEQPACK_FUZZ_BUILT is $(sed -n 's/^SEQPACK_FUZZ_BUILT:INTERNAL=//p' "$build/CMakeCache.txt")"; bad=1; }
  return $bad
}

mkdir -p "$dir"
dir=$(cd "$dir" && pwd -P)
configure hidden "$hide" || { tail -20 "$dir/hidden.log"; echo "no-cccl: configure failed"; exit 1; }
if ! check hidden; then
  echo "FAILED: fuzzing without Thrust (log: $dir/hidden.log)"
  exit 1
fi
echo "without Thrust: 4 targets configured, fuzz_differential and fuzz_context_parallel skipped with the reason"

if [[ -d /usr/local/cuda/lib64/cmake/thrust ]]; then
  configure visible "" || { tail -20 "$dir/visible.log"; echo "no-cccl: configure with Thrust failed"; exit 1; }
  if out=$(check visible); then
    echo "FAILED: the check passed with Thrust visible (it cannot fail)"
    exit 1
  fi
  echo "with Thrust visible the check fails, as it must: $(head -1 <<<"$out")"
else
  echo "no /usr/local/cuda here: the check's failing case (Thrust visible) not run"
fi
