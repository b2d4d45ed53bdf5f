#!/usr/bin/env bash
# CI's fuzzing step: builds the fuzz preset (clang-14, libFuzzer, ASan +
# UBSan) and fuzzes every target for SECONDS (default 60) from its committed
# corpus, with the flags of fuzz/options/<target>.options. Any finding fails
# the step, with the failing input and its report. ClusterFuzzLite's build.sh
# (tests/fuzz/cfl_build_test.sh, about 3 minutes on 2 cores) runs in the
# overnight job, outside CI's time.
#   fuzz/ci.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
source fuzz/options.sh
seconds=${1:-60}
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
command -v llvm-symbolizer-14 >/dev/null && export ASAN_SYMBOLIZER_PATH=$(command -v llvm-symbolizer-14)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
for target in build_pack differential protocol context_parallel large_pack port_answer; do
  mkdir -p "$work/$target"
  mapfile -t flags < <(libfuzzer_flags "$target")
  [[ ${#flags[@]} -eq 4 ]] || { echo "fuzz/options/$target.options: expected max_len, timeout, rss_limit_mb and dict" >&2; exit 2; }
  if build/fuzz/fuzz/fuzz_$target "$work/$target" "corpus/$target" -max_total_time="$seconds" "${flags[@]}" \
       -artifact_prefix="$work/$target-" -print_final_stats=1 >"$work/$target.log" 2>&1; then
    echo "fuzz $target: ${seconds} s, $(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$target.log") runs," \
      "$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/$target.log") exec/s, no finding"
  else
    status=1
    echo "fuzz $target: FINDING"
    grep -E "seqpack-fuzz|^case:|SUMMARY|ERROR" "$work/$target.log" | head -20
    for f in "$work/$target"-*; do [[ -f $f ]] && { echo "input ($f), base64:"; base64 -w0 "$f"; echo; }; done
  fi
done
exit $status
