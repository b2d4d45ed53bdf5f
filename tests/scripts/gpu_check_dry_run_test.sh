#!/usr/bin/env bash
# scripts/gpu-check.sh checked without a GPU (CTest label `script`, seconds):
# its dry run walks every step with the deadline logic, and each way a run can
# end gives its own exit status and summary lines. Each run writes into a
# fresh OUT folder.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
script=$root/scripts/gpu-check.sh
work=$(mktemp -d "${TMPDIR:-/tmp}/gpu-check-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
failures=0
n=0
# check NAME WANT_EXIT PATTERN... -- ARGS...: runs the script with ARGS (and
# the environment in ENV_ARGS), expects exit WANT_EXIT and each PATTERN (grep -E) in summary.md.
check() {
  local name=$1 want=$2
  shift 2
  local patterns=()
  while [[ $1 != -- ]]; do patterns+=("$1"); shift; done
  shift
  n=$((n + 1))
  local out=$work/$n
  env OUT="$out" "${ENV_ARGS[@]}" "$script" "$@" >"$out.stdout" 2>&1
  local rc=$?
  local ok=1
  [[ $rc == "$want" ]] || { echo "FAIL $name: exit $rc, want $want"; ok=0; }
  [[ $want == 2 || -s $out/gpu-check/run.log ]] || { echo "FAIL $name: no run.log"; ok=0; }
  for p in "${patterns[@]}"; do
    grep -Eq -- "$p" "$out/gpu-check/summary.md" 2>/dev/null || { echo "FAIL $name: summary lacks /$p/"; ok=0; }
  done
  if [[ $ok == 1 ]]; then
    echo "ok   $name"
  else
    failures=$((failures + 1))
    sed 's/^/     | /' "$out.stdout"
  fi
}
# The script is bash; the runs below need nvcc's absence or presence only as set here.
ENV_ARGS=(COMPUTE_SANITIZER=/bin/true)
check "dry run within the budget: every step walked" 0 \
  '^- smoke: dry run' '^- ctest: dry run' '^- bench: dry run' '^- memcheck: dry run' '^- racecheck: dry run' \
  'exit 0, dry run' -- --dry-run --budget 600
check "budget 260: the steps past the deadline are left out" 5 \
  '^- smoke: dry run' '^- ctest: skipped, [0-9]+s left' '^- bench: skipped' '^- racecheck: skipped' -- --dry-run --budget 260
check "budget 150: the build's timeout is min(cap, time left) and it runs out" 7 \
  '^- build: TIMED OUT after 1[01][0-9]s' -- --dry-run --budget 150
grep -q 'smoke: start, timeout 1[0-9]s\|smoke: start, timeout 20s' "$work/2/gpu-check/run.log" ||
  { echo "FAIL budget 260: smoke's timeout is not the time left"; failures=$((failures + 1)); }
ENV_ARGS=(CUDACXX=/nonexistent/nvcc)
check "a missing nvcc is a missing dependency, not 'no device'" 4 'MISSING: nvcc' -- --dry-run
check "prebuilt binaries that are not there are missing" 4 'MISSING: prebuilt binary' -- --dry-run --prebuilt "$work/none"
ENV_ARGS=()
check "a budget that is not a number is a usage error" 2 -- --budget soon
if ! command -v nvidia-smi >/dev/null 2>&1; then
  check "no device: the dry run's walk, then exit 3" 3 'no CUDA device: running as a dry run' '^- ctest: dry run' --
fi
echo "$((n - failures)) of $n passed"
exit $((failures > 0))
