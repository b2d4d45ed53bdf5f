#!/usr/bin/env bash
# Measures the fuzz targets' speed the way fuzz/README.md reports it: each
# target RUNS times for SECONDS from its committed corpus (a fresh work
# directory each time, so every run starts alike), with the flags of
# fuzz/options/<target>.options; prints each run's stat::average_exec_per_sec,
# their median and the edges (libFuzzer's cov) at the end of the last run.
# Run it on an idle machine: the runs go one after another.
#   fuzz/measure.sh [--preset fuzz|fuzz-fast] [--seconds 60] [--runs 3] [TARGET...]
# The 10-minute coverage figure: fuzz/measure.sh --seconds 600 --runs 1
set -euo pipefail
cd "$(dirname "$0")/.."
source fuzz/options.sh
preset=fuzz seconds=60 runs=3 targets=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --preset) preset=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    -*) echo "measure: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
[[ ${#targets[@]} -gt 0 ]] || targets=(build_pack differential protocol context_parallel large_pack port_answer)
for t in "${targets[@]}"; do
  [[ -x build/$preset/fuzz/fuzz_$t ]] || { echo "measure: build/$preset/fuzz/fuzz_$t is missing (cmake --build --preset $preset)" >&2; exit 2; }
done
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "| target | preset | seconds | exec/s of each run | median exec/s | edges at the end |"
echo "| --- | --- | --- | --- | --- | --- |"
for t in "${targets[@]}"; do
  mapfile -t flags < <(libfuzzer_flags "$t")
  [[ ${#flags[@]} -eq 4 ]] || { echo "fuzz/options/$t.options: expected max_len, timeout, rss_limit_mb and dict" >&2; exit 2; }
  rates=() edges=0
  for ((i = 0; i < runs; i++)); do
    rm -rf "$work/corpus" && mkdir "$work/corpus"
    if ! build/$preset/fuzz/fuzz_$t "$work/corpus" "corpus/$t" -max_total_time="$seconds" "${flags[@]}" \
         -artifact_prefix="$work/" -print_final_stats=1 >"$work/log" 2>&1; then
      echo "measure: fuzz_$t stopped with a finding:" >&2
      grep -E "seqpack-fuzz|SUMMARY|ERROR" "$work/log" | head -5 >&2
      exit 1
    fi
    rates+=("$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/log")")
    edges=$(grep -oE 'DONE +cov: [0-9]+' "$work/log" | grep -oE '[0-9]+$' || echo 0)
  done
  median=$(printf '%s\n' "${rates[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}')
  echo "| fuzz_$t | $preset | $seconds | ${rates[*]} | $median | $edges |"
done
