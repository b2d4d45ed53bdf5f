#!/usr/bin/env bash
# .clusterfuzzlite/build.sh run the way ClusterFuzzLite's build step runs it,
# then checked the way its run step uses what it leaves:
#   1. a clean OUT and WORK, SRC holding the source as $SRC/seqpack, and the
#      environment OSS-Fuzz's `compile` gives build.sh for SANITIZER (below);
#   2. every target fuzz/CMakeLists.txt configured (SEQPACK_FUZZ_TARGETS, less
#      the two that need the GPU library where it is off) is in OUT with
#      <target>_seed_corpus.zip (all of corpus/<target>/), <target>.dict (the
#      dictionary its fuzz/options file names) and <target>.options (a
#      [libfuzzer] section whose dict names that file), and OUT has no other
#      target;
#   3. each target runs over its unzipped seed corpus with -runs=0 and the
#      flags of its options file, under base-runner's ASAN_OPTIONS and
#      UBSAN_OPTIONS, with no finding (exit 0, no sanitizer report); the
#      coverage build must also write its profile.
# With --plant, three planted breaks follow, each of which must fail step 2
# or 3 (they reuse WORK, so they cost seconds): build.sh copying one target
# fewer, build.sh writing an options file whose dict names a file not in OUT,
# and a target that reports an error on its seeds.
#
#   tests/fuzz/cfl_build_test.sh SANITIZER [--plant] [--dir DIR] [--libcxx] [--rapidcheck SRC]
# SANITIZER: address, undefined or coverage (project.yaml's sanitizers, and
# the coverage build its coverage workflow makes). fuzz/overnight.sh runs
# address with --plant, then undefined and coverage.
# --dir keeps OUT, WORK and the logs in DIR (default: a temporary directory,
# removed at the end); --reuse-work keeps DIR's WORK (an incremental build:
# not the engine's clean one, for trying changes). --libcxx adds OSS-Fuzz's CXXFLAGS_EXTRA
# (-stdlib=libc++), which needs libc++-14-dev and a RapidCheck built with
# libc++: --rapidcheck SRC puts a RapidCheck source tree at $SRC/rapidcheck,
# as the image does, and build.sh builds it. Without --libcxx the C++ library
# is libstdc++ (Debian's RapidCheck is built against it): the one difference
# from the engine's flags.
#
# Flags, from google/oss-fuzz (commit 955c686, 2025):
#   infra/base-images/base-clang/Dockerfile: CC, CXX, CFLAGS, CXXFLAGS_EXTRA;
#   infra/base-images/base-builder/Dockerfile: SANITIZER_FLAGS_address,
#     SANITIZER_FLAGS_undefined, SANITIZER_FLAGS_coverage, COVERAGE_FLAGS,
#     COVERAGE_FLAGS_coverage;
#   infra/base-images/base-builder/compile: CFLAGS="$CFLAGS $SANITIZER_FLAGS
#     $COVERAGE_FLAGS", CXXFLAGS="$CFLAGS $CXXFLAGS_EXTRA", undefined adds
#     -fno-sanitize=function to CFLAGS only;
#   infra/base-images/base-builder/compile_libfuzzer: LIB_FUZZING_ENGINE;
#   infra/base-images/base-runner/Dockerfile: ASAN_OPTIONS, UBSAN_OPTIONS.
# CC and CXX are clang-14 and clang++-14 here (the engine's clang is newer).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd -P)
usage() { echo "usage: $0 address|undefined|coverage [--plant] [--dir DIR [--reuse-work]] [--libcxx] [--rapidcheck SRC]" >&2; exit 2; }
[[ $# -ge 1 ]] || usage
sanitizer=$1
shift
plant=0 dir="" libcxx=0 rapidcheck="" reuse=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --plant) plant=1 ;;
    --dir) dir=$2; shift ;;
    --libcxx) libcxx=1 ;;
    --rapidcheck) rapidcheck=$2; shift ;;
    --reuse-work) reuse=1 ;;
    *) usage ;;
  esac
  shift
done

# --- OSS-Fuzz's environment for this sanitizer ------------------------------
base_cflags="-O1 -fno-omit-frame-pointer -gline-tables-only -Wno-error=incompatible-function-pointer-types \
-Wno-error=int-conversion -Wno-error=deprecated-declarations -Wno-error=implicit-function-declaration \
-Wno-error=implicit-int -Wno-error=unknown-warning-option -Wno-error=vla-cxx-extension \
-DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION"
ubsan_checks="array-bounds,bool,builtin,enum,function,integer-divide-by-zero,null,object-size,return,returns-nonnull-attribute,shift,signed-integer-overflow,unsigned-integer-overflow,unreachable,vla-bound,vptr"
ubsan_fatal="array-bounds,bool,builtin,enum,function,integer-divide-by-zero,null,object-size,return,returns-nonnull-attribute,shift,signed-integer-overflow,unreachable,vla-bound,vptr"
coverage_flags="-fsanitize=fuzzer-no-link"
case $sanitizer in
  address) sanitizer_flags="-fsanitize=address -fsanitize-address-use-after-scope" ;;
  undefined) sanitizer_flags="-fsanitize=$ubsan_checks -fno-sanitize-recover=$ubsan_fatal" ;;
  coverage)
    sanitizer_flags=""
    coverage_flags="-fprofile-instr-generate -fcoverage-mapping -pthread -Wl,--no-as-needed -Wl,-ldl -Wl,-lm -Wno-unused-command-line-argument" ;;
  *) usage ;;
esac
cxxflags_extra=""
engine="-fsanitize=fuzzer"
if [[ $libcxx == 1 ]]; then
  cxxflags_extra="-stdlib=libc++"
  # Debian's libclang_rt.fuzzer is built against libstdc++ (OSS-Fuzz's keeps
  # its own C++ library inside): link that too, here only.
  engine="-fsanitize=fuzzer -Wl,-l:libstdc++.so.6"  # (clang rewrites a plain -lstdc++ to -lc++)
fi
cflags="$base_cflags $sanitizer_flags $coverage_flags"
cxxflags="$cflags $cxxflags_extra"
[[ $sanitizer == undefined ]] && cflags="$cflags -fno-sanitize=function"
asan_options="alloc_dealloc_mismatch=0:allocator_may_return_null=1:allocator_release_to_os_interval_ms=500:check_malloc_usable_size=0:detect_container_overflow=1:detect_odr_violation=0:detect_leaks=1:detect_stack_use_after_return=1:fast_unwind_on_fatal=0:handle_abort=1:handle_segv=1:handle_sigill=1:max_uar_stack_size_log=16:print_scariness=1:quarantine_size_mb=10:strict_memcmp=1:strip_path_prefix=/workspace/:symbolize=1:use_sigaltstack=1:dedup_token_length=3"
ubsan_options="print_stacktrace=1:print_summary=1:silence_unsigned_overflow=1:strip_path_prefix=/workspace/:symbolize=1:dedup_token_length=3"

if [[ -z "$dir" ]]; then
  dir=$(mktemp -d /tmp/cfl-test.XXXXXX)
  trap 'rm -rf "$dir"' EXIT
fi
mkdir -p "$dir"
dir=$(cd "$dir" && pwd -P)
rm -rf "$dir/out" "$dir/src" "$dir/seeds" "$dir/profiles"
[[ $reuse == 1 ]] || rm -rf "$dir/work"
mkdir -p "$dir/out" "$dir/work" "$dir/src"
ln -s "$root" "$dir/src/seqpack"
[[ -n "$rapidcheck" ]] && ln -s "$(cd "$rapidcheck" && pwd -P)" "$dir/src/rapidcheck"

# Runs a build.sh (the real one, or a planted copy) as the image does: copied
# to $SRC/build.sh, run with the engine's environment: OUT=$2, WORK=$dir/work,
# SRC=$dir/src (the source at $SRC/seqpack).
run_build() {
  local script=$1 out=$2
  cp "$script" "$dir/src/build.sh"
  env CC=clang-14 CXX=clang++-14 CCC=clang++-14 CFLAGS="$cflags" CXXFLAGS="$cxxflags" \
    LIB_FUZZING_ENGINE="$engine" SANITIZER="$sanitizer" FUZZING_ENGINE=libfuzzer ARCHITECTURE=x86_64 \
    FUZZING_LANGUAGE=c++ SRC="$dir/src" OUT="$out" WORK="$dir/work" SEQPACK_JOBS="${SEQPACK_JOBS:-2}" \
    bash -eux "$dir/src/build.sh"  # as compile runs it
}

# Step 2: OUT holds every configured target with its three files. Prints
# each problem on a line starting "cfl-check:"; returns 1 if there is any.
check_out() {
  local out=$1 cache="$dir/work/seqpack-build/CMakeCache.txt" bad=0 t name src_dict dict n_zip n_corpus f
  local -a expected
  IFS=';' read -r -a expected <<<"$(sed -n 's/^SEQPACK_FUZZ_TARGETS:INTERNAL=//p' "$cache")"
  [[ ${#expected[@]} -gt 0 ]] || { echo "cfl-check: SEQPACK_FUZZ_TARGETS not in $cache"; return 1; }
  if grep -q '^SEQPACK_BUILD_GPU:BOOL=OFF' "$cache"; then
    echo "note: SEQPACK_BUILD_GPU is OFF in this build: fuzz_differential and fuzz_context_parallel not expected"
    expected=("${expected[@]/differential/}")
    expected=("${expected[@]/context_parallel/}")
  fi
  for t in "${expected[@]}"; do
    [[ -n "$t" ]] || continue
    name=fuzz_$t
    [[ -x "$out/$name" ]] || { echo "cfl-check: $name missing from OUT"; bad=1; continue; }
    if [[ -f "$out/${name}_seed_corpus.zip" ]]; then
      n_zip=$(unzip -Z1 "$out/${name}_seed_corpus.zip" | grep -vc '/$' || true)
      n_corpus=$(find "$root/corpus/$t" -type f | wc -l)
      [[ "$n_zip" == "$n_corpus" && "$n_corpus" -gt 0 ]] ||
        { echo "cfl-check: ${name}_seed_corpus.zip holds $n_zip files, corpus/$t $n_corpus"; bad=1; }
    else
      echo "cfl-check: ${name}_seed_corpus.zip missing from OUT"; bad=1
    fi
    src_dict=$(sed -n 's/^dict = //p' "$root/fuzz/options/$t.options")
    if [[ ! -s "$out/$name.dict" ]]; then
      echo "cfl-check: $name.dict missing from OUT"; bad=1
    elif ! cmp -s "$out/$name.dict" "$root/fuzz/dict/$src_dict"; then
      echo "cfl-check: $name.dict is not fuzz/dict/$src_dict (fuzz/options/$t.options)"; bad=1
    fi
    if [[ ! -f "$out/$name.options" ]]; then
      echo "cfl-check: $name.options missing from OUT"; bad=1
    else
      grep -qx '\[libfuzzer\]' "$out/$name.options" || { echo "cfl-check: $name.options has no [libfuzzer] section"; bad=1; }
      dict=$(sed -n 's/^dict = //p' "$out/$name.options")
      [[ "$dict" == "$name.dict" && -s "$out/$dict" ]] ||
        { echo "cfl-check: $name.options names dict '$dict', not $name.dict in OUT"; bad=1; }
    fi
  done
  for f in "$out"/fuzz_*; do
    [[ -x "$f" && ! -d "$f" ]] || continue
    name=$(basename "$f")
    [[ " ${expected[*]/#/fuzz_} " == *" $name "* ]] || { echo "cfl-check: $name in OUT is not a configured target"; bad=1; }
  done
  return $bad
}

# Step 3: each target over its unzipped seeds, -runs=0, its options' flags.
run_seeds() {
  local out=$1 bad=0 f name key value log
  local -a flags
  rm -rf "$dir/seeds" "$dir/profiles"
  mkdir -p "$dir/seeds" "$dir/profiles"
  for f in "$out"/fuzz_*; do
    [[ -x "$f" && ! -d "$f" ]] || continue
    name=$(basename "$f")
    mkdir -p "$dir/seeds/$name"
    unzip -q "$out/${name}_seed_corpus.zip" -d "$dir/seeds/$name"
    flags=()
    while IFS=' =' read -r key value; do
      case $key in
        max_len|timeout|rss_limit_mb) flags+=("-$key=$value") ;;
        dict) flags+=("-dict=$out/$value") ;;
      esac
    done <"$out/$name.options"
    log=$dir/$name.runs0.log
    if (cd "$out" && ASAN_OPTIONS=$asan_options UBSAN_OPTIONS=$ubsan_options \
          LLVM_PROFILE_FILE="$dir/profiles/$name.%p.profraw" \
          "./$name" -runs=0 "${flags[@]}" "$dir/seeds/$name") >"$log" 2>&1 &&
       ! grep -qE '^==[0-9]+==ERROR|runtime error:|^SUMMARY: |seqpack-fuzz:' "$log"; then
      echo "run $name: $(find "$dir/seeds/$name" -type f | wc -l) seeds, -runs=0, no finding"
    else
      echo "cfl-check: $name -runs=0 over its seeds: FINDING"
      grep -E 'ERROR|runtime error:|SUMMARY|seqpack-fuzz:' "$log" | head -5 | sed 's/^/  /'
      bad=1
    fi
    if [[ $sanitizer == coverage ]] && ! compgen -G "$dir/profiles/$name.*.profraw" >/dev/null; then
      echo "cfl-check: $name (coverage build) wrote no profile"; bad=1
    fi
  done
  return $bad
}

start=$SECONDS
echo "== ClusterFuzzLite build.sh, SANITIZER=$sanitizer (clang-14${cxxflags_extra:+, $cxxflags_extra}; log $dir/build.log)"
if ! run_build "$root/.clusterfuzzlite/build.sh" "$dir/out" >"$dir/build.log" 2>&1; then
  tail -30 "$dir/build.log"
  echo "cfl-check: build.sh failed (SANITIZER=$sanitizer)"
  exit 1
fi
grep -E '^build.sh:|seqpack fuzz:' "$dir/build.log" || true
echo "build: $((SECONDS - start)) s"
status=0
check_out "$dir/out" || status=1
run_seeds "$dir/out" || status=1
echo "checks: $((SECONDS - start)) s in all"
if [[ $status != 0 ]]; then
  echo "cfl build test ($sanitizer): FAILED"
  exit 1
fi

if [[ $plant == 1 ]]; then
  # Each planted break must fail a check; the test fails if one passes.
  planted() {  # NAME SED-EXPRESSION: build.sh with the expression applied
    local name=$1 expr=$2 out="$dir/plant-$1" output
    sed "$expr" "$root/.clusterfuzzlite/build.sh" >"$dir/planted-build.sh"
    cmp -s "$root/.clusterfuzzlite/build.sh" "$dir/planted-build.sh" &&
      { echo "cfl-check: planted '$name' changed nothing in build.sh (update the plant)"; return 1; }
    rm -rf "$out"; mkdir -p "$out"
    run_build "$dir/planted-build.sh" "$out" >"$dir/plant-$name.log" 2>&1 ||
      { echo "planted $name: caught: build.sh failed"; return 0; }
    if output=$(check_out "$out"); then
      echo "cfl-check: planted $name NOT caught"; return 1
    fi
    echo "planted $name: caught: $(grep -m1 '^cfl-check:' <<<"$output" | sed 's/^cfl-check: //')"
  }
  planted target-missing 's/^for t in "${targets\[@\]}"; do$/for t in "${targets[@]:1}"; do/' || status=1
  planted wrong-dict-name 's/dict = \$name\.dict/dict = $t.dict/' || status=1
  # A target that reports an error on its seeds (a stand-in binary).
  cp -r "$dir/out" "$dir/plant-finding"
  victim=""
  # (the name, not the path, decides: a temporary directory's path may hold a dot)
  for f in "$dir/plant-finding"/fuzz_*; do
    b=$(basename "$f")
    [[ -f $f && -x $f && $b != *.* ]] && { victim=$b; break; }
  done
  [[ -n $victim ]] || { echo "cfl-check: no target binary in OUT to plant a finding in"; status=1; }
  printf '#!/bin/sh\necho "==1==ERROR: AddressSanitizer: planted finding"\nexit 1\n' >"$dir/plant-finding/$victim"
  chmod +x "$dir/plant-finding/$victim"
  if output=$(run_seeds "$dir/plant-finding"); then
    echo "cfl-check: planted finding in $victim NOT caught"; status=1
  else
    echo "planted finding: caught: $(grep -m1 '^cfl-check:' <<<"$output" | sed 's/^cfl-check: //')"
  fi
  echo "with planted breaks: $((SECONDS - start)) s"
fi
if [[ $status != 0 ]]; then
  echo "cfl build test ($sanitizer): FAILED"
  exit 1
fi
echo "cfl build test ($sanitizer): passed in $((SECONDS - start)) s"
