#!/usr/bin/env bash
# What the consequence line costs `seqpack conform` (issue 27's budget: at
# most 20% on the default run against the oracle): the same run with and
# without --no-consequences, alternated A B A B in one go, for the oracle
# (no failure group: nothing to judge) and for a wrong port whose faults give
# failure groups: two_faults (two metadata-only groups) and
# full_offsets_plus1 (one wrong-output group: up to 7 members judged, and
# every shrinking step judged against the group's severity).
#   bench/consequence_overhead.sh BUILD_DIR [ROUNDS]   (default build/default, 3)
set -euo pipefail
build=${1:-build/default}
rounds=${2:-3}
seqpack=$build/cli/seqpack
wrong=$build/ports/wrong_port
run() {  # label, extra flags...: prints seconds
  local start end
  start=$(date +%s.%N)
  "$seqpack" conform --jobs 1 "${@:2}" >/dev/null 2>&1 || true  # one port, as when its figures were taken
  end=$(date +%s.%N)
  echo "$1 $(echo "$end - $start" | bc)"
}
for ((k = 0; k < rounds; ++k)); do
  run oracle_with --port "$seqpack oracle"
  run oracle_without --port "$seqpack oracle" --no-consequences
  run wrong_with --port "$wrong two_faults"
  run wrong_without --port "$wrong two_faults" --no-consequences
  run harm_with --port "$wrong full_offsets_plus1"
  run harm_without --port "$wrong full_offsets_plus1" --no-consequences
done | awk '{ s[$1] += $2; n[$1]++ } END {
  for (k in s) printf "%-15s %.2f s (mean of %d)\n", k, s[k] / n[k], n[k]
  printf "oracle: with/without = %.3f\n", s["oracle_with"] / s["oracle_without"]
  printf "wrong port (2 groups): with/without = %.3f\n", s["wrong_with"] / s["wrong_without"]
  printf "harmful port (1 wrong-output group): with/without = %.3f\n", s["harm_with"] / s["harm_without"] }'
