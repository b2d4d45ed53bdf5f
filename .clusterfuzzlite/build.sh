#!/bin/bash -eu
# ClusterFuzzLite / OSS-Fuzz build: every fuzz target, built with the engine's
# $CC, $CXX, $CFLAGS, $CXXFLAGS and linked with $LIB_FUZZING_ENGINE, into $OUT,
# each with <target>_seed_corpus.zip (corpus/<target>/), <target>.dict and
# <target>.options beside it. The sanitizer comes from the flags; seqpack adds
# none of its own here and does not turn warnings into errors (the engine's
# clang may be newer than the one the project is tested with).
#   Verified by hand: CC=clang-14 CXX=clang++-14 CFLAGS=... CXXFLAGS=... \
#     LIB_FUZZING_ENGINE=-fsanitize=fuzzer OUT=... WORK=... .clusterfuzzlite/build.sh
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[[ -f "$root/fuzz/CMakeLists.txt" ]] || root="$SRC/seqpack"
work=${WORK:-/tmp}/seqpack-build
cmake -S "$root" -B "$work" -G Ninja \
  -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
  -DCMAKE_C_FLAGS="$CFLAGS" -DCMAKE_CXX_FLAGS="$CXXFLAGS" -DCMAKE_BUILD_TYPE=Engine \
  -DSEQPACK_FUZZ_ENGINE=ON -DSEQPACK_FUZZ_LINK="$LIB_FUZZING_ENGINE" -DSEQPACK_WERROR=OFF \
  -DSEQPACK_BUILD_TESTS=OFF -DSEQPACK_BUILD_CLI=OFF -DSEQPACK_BUILD_BENCH=OFF -DSEQPACK_BUILD_TORCH=OFF
targets=(build_pack differential protocol context_parallel large_pack port_answer)
cmake --build "$work" -j "$(nproc)" --target "${targets[@]/#/fuzz_}"
for t in "${targets[@]}"; do
  name=fuzz_$t
  cp "$work/fuzz/$name" "$OUT/$name"
  rm -f "$OUT/${name}_seed_corpus.zip"
  (cd "$root/corpus/$t" && zip -q -r "$OUT/${name}_seed_corpus.zip" .)
  dict=$(sed -n 's/^dict = //p' "$root/fuzz/options/$t.options")
  cp "$root/fuzz/dict/$dict" "$OUT/$name.dict"
  sed "s/^dict = .*/dict = $name.dict/" "$root/fuzz/options/$t.options" >"$OUT/$name.options"
done
