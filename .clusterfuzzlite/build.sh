#!/bin/bash -eu
# ClusterFuzzLite / OSS-Fuzz build: every fuzz target this configuration can
# build, compiled with the engine's $CC, $CXX, $CFLAGS, $CXXFLAGS and linked
# with $LIB_FUZZING_ENGINE, into $OUT, each with <target>_seed_corpus.zip
# (corpus/<target>/), <target>.dict and <target>.options beside it. The
# sanitizer comes from the flags; seqpack adds none of its own here and does
# not turn warnings into errors (the engine's clang is newer than the one the
# project is tested with).
#
# The engine runs it as `compile` does (infra/base-images/base-builder/compile
# in google/oss-fuzz) with CC, CXX, CFLAGS, CXXFLAGS, LIB_FUZZING_ENGINE, SRC,
# OUT, WORK and SANITIZER set. tests/fuzz/cfl_build_test.sh runs it the same
# way (fuzz/ci.sh: address; fuzz/overnight.sh: undefined and coverage).
#
# Dependencies (.clusterfuzzlite/Dockerfile):
# - $SRC/rapidcheck, when present (the image clones it at a pinned commit), is
#   built here with the engine's compiler and flags (its libc++; a
#   distribution's RapidCheck is built against libstdc++ and does not link)
#   and installed in $WORK/seqpack-deps, which goes first in CMAKE_PREFIX_PATH.
#   Elsewhere an installed RapidCheck is used (librapidcheck-dev).
# - Thrust (CCCL) is found as gpu/CMakeLists.txt finds it: Thrust_DIR or
#   CMAKE_PREFIX_PATH (the image sets Thrust_DIR to its pinned CCCL checkout),
#   then the CUDA Toolkit's copy. Where there is none, the GPU library is left
#   out and the two targets that link it are skipped (CMake says which).
#   SEQPACK_BUILD_GPU=ON|OFF in the environment overrides the probe.
# - nlohmann-json: the base image's distribution package.
#
# For tests: SEQPACK_CMAKE_ARGS adds arguments to every configure (split on
# spaces; tests hide the CUDA Toolkit with it); SEQPACK_JOBS sets the build's
# parallelism (default: nproc); `build.sh --configure-only` stops after
# configuring seqpack.
set -o pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
[[ -f "$root/fuzz/CMakeLists.txt" ]] || root=$(cd "$SRC/seqpack" && pwd -P)
configure_only=0
[[ "${1:-}" == --configure-only ]] && configure_only=1
work=$WORK/seqpack-build
jobs=${SEQPACK_JOBS:-$(nproc)}
read -r -a extra <<<"${SEQPACK_CMAKE_ARGS:-}"

# RapidCheck from source, with the engine's toolchain.
if [[ -d "${SRC:-/nonexistent}/rapidcheck" ]]; then
  deps=$WORK/seqpack-deps
  cmake -S "$SRC/rapidcheck" -B "$WORK/rapidcheck-build" -G Ninja \
    -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
    -DCMAKE_C_FLAGS="$CFLAGS" -DCMAKE_CXX_FLAGS="$CXXFLAGS" -DCMAKE_BUILD_TYPE=Engine \
    -DCMAKE_INSTALL_PREFIX="$deps" -DRC_ENABLE_TESTS=OFF -DRC_ENABLE_EXAMPLES=OFF \
    -DCMAKE_POLICY_VERSION_MINIMUM=3.5 "${extra[@]}"  # its cmake_minimum_required(3.0): CMake 4 needs this
  cmake --build "$WORK/rapidcheck-build" -j "$jobs"
  cmake --install "$WORK/rapidcheck-build" >/dev/null
  export CMAKE_PREFIX_PATH="$deps${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
fi

# Thrust: probed with the search gpu/CMakeLists.txt makes (keep the two alike).
gpu=${SEQPACK_BUILD_GPU:-}
if [[ -z "$gpu" ]]; then
  probe=$WORK/seqpack-thrust-probe
  mkdir -p "$probe/src"
  cat >"$probe/src/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.22)
project(seqpack_thrust_probe LANGUAGES NONE)
find_package(Thrust CONFIG QUIET PATHS /usr/local/cuda/lib64/cmake/thrust)
if(NOT Thrust_FOUND)
  message(FATAL_ERROR "Thrust (CCCL) not found")
endif()
message(STATUS "Thrust: ${Thrust_DIR}")
EOF
  rm -rf "$probe/build"
  if cmake -S "$probe/src" -B "$probe/build" "${extra[@]}" >"$probe/log" 2>&1; then
    gpu=ON
    echo "build.sh: $(grep -m1 -- '-- Thrust:' "$probe/log" | sed 's/^-- //')"
  else
    gpu=OFF
    echo "build.sh: Thrust (CCCL) not found (Thrust_DIR, CMAKE_PREFIX_PATH, the CUDA Toolkit): SEQPACK_BUILD_GPU=OFF"
  fi
fi

cmake -S "$root" -B "$work" -G Ninja \
  -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
  -DCMAKE_C_FLAGS="$CFLAGS" -DCMAKE_CXX_FLAGS="$CXXFLAGS" -DCMAKE_BUILD_TYPE=Engine \
  -DSEQPACK_FUZZ_ENGINE=ON -DSEQPACK_FUZZ_LINK="$LIB_FUZZING_ENGINE" -DSEQPACK_WERROR=OFF \
  -DSEQPACK_BUILD_GPU="$gpu" -DSEQPACK_BUILD_FUZZ=ON -DSEQPACK_BUILD_PYTHON=OFF \
  -DSEQPACK_BUILD_TESTS=OFF -DSEQPACK_BUILD_CLI=OFF -DSEQPACK_BUILD_BENCH=OFF -DSEQPACK_BUILD_TORCH=OFF \
  "${extra[@]}"
[[ $configure_only == 1 ]] && exit 0

# The targets fuzz/CMakeLists.txt defined in this configuration.
built=$(sed -n 's/^SEQPACK_FUZZ_BUILT:INTERNAL=//p' "$work/CMakeCache.txt")
IFS=';' read -r -a targets <<<"$built"
[[ ${#targets[@]} -gt 0 ]] || { echo "build.sh: no fuzz target configured" >&2; exit 1; }
cmake --build "$work" -j "$jobs" --target "${targets[@]/#/fuzz_}"
for t in "${targets[@]}"; do
  name=fuzz_$t
  cp "$work/fuzz/$name" "$OUT/$name"
  rm -f "$OUT/${name}_seed_corpus.zip"
  (cd "$root/corpus/$t" && zip -q -r "$OUT/${name}_seed_corpus.zip" .)
  dict=$(sed -n 's/^dict = //p' "$root/fuzz/options/$t.options")
  cp "$root/fuzz/dict/$dict" "$OUT/$name.dict"
  sed "s/^dict = .*/dict = $name.dict/" "$root/fuzz/options/$t.options" >"$OUT/$name.options"
done
echo "build.sh: ${targets[*]/#/fuzz_} in $OUT"
