#!/usr/bin/env bash
# What --jobs buys (issue 28's target: at least 1.7x on 2 cores): the default
# run of the original module through the Python adapter (vectors, both
# profiles, its known failures) at --jobs 1 and --jobs 2, alternated A B A B
# in one go, and the ratio of the mean wall times. Run it on an otherwise
# idle machine: the figure is a ratio of two runs on the same cores.
#   bench/jobs.sh BUILD_DIR [ROUNDS]   (default build/default, 3)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/default}
rounds=${2:-3}
seqpack=$build/cli/seqpack
original=$("$seqpack" paths original)
port="/usr/bin/python3 ports/python/seqpack_port.py $original"
run() {  # jobs: prints "jobs seconds", and fails unless the run conforms
  local start end
  start=$(date +%s.%N)
  "$seqpack" conform --port "$port" --known-failures ports/python/original.known_failures --jobs "$1" >/dev/null 2>&1 ||
    { echo "bench/jobs.sh: the original does not conform at --jobs $1" >&2; exit 1; }
  end=$(date +%s.%N)
  echo "$1 $(echo "$end - $start" | bc)"
}
for ((k = 0; k < rounds; ++k)); do
  run 1
  run 2
done | awk '{ s[$1] += $2; n[$1]++ } END {
  for (k in s) printf "--jobs %s: %.2f s (mean of %d)\n", k, s[k] / n[k], n[k]
  printf "speed-up, --jobs 2 against --jobs 1: %.2fx\n", s["1"] / n["1"] / (s["2"] / n["2"]) }'
