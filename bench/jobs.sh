#!/usr/bin/env bash
# What --jobs buys (issue 28's target: at least 1.7x on 2 cores): the default
# run of the original module through the Python adapter (vectors, both
# profiles, its known failures) at --jobs 1 and --jobs 2, alternated A B A B
# in one go, and the ratio of the mean wall times. Run it on an otherwise
# idle machine: the figure is a ratio of two runs on the same cores.
# The same rounds give the bounds of that ratio on these cores:
# - "pair": two --jobs 1 runs side by side, twice the work of one run on the
#   same cores; 2 x one run / pair is what the cores allow this workload
#   with the start-ups counted twice over.
# - "start1", "start2": the start-up alone (the port started, its hello
#   read, no case) of 1 port (S1) and of 2 side by side (S2, slower: the two
#   start-ups share the cores). With T one port's run, its cases take
#   T - S1; an even split of them gives at most T / (S2 + (T - S1) / 2).
# - both: the pair answers two runs' cases in pair - S2, so one run's cases
#   on 2 ports take at least (pair - S2) / 2, and --jobs 2 at most
#   T / (S2 + (pair - S2) / 2): the tightest bound, and the share of it
#   that --jobs 2 gets.
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
pair() {  # two --jobs 1 runs at once: prints "pair seconds"
  local start end
  start=$(date +%s.%N)
  run 1 >/dev/null &
  run 1 >/dev/null
  wait $! || exit 1
  end=$(date +%s.%N)
  echo "pair $(echo "$end - $start" | bc)"
}
start() {  # the start-up of $1 ports side by side: prints "start<N> seconds"
  local start end
  start=$(date +%s.%N)
  "$seqpack" conform --port "$port" --no-vectors --cases 0 --jobs "$1" >/dev/null 2>&1 ||
    { echo "bench/jobs.sh: the port does not start" >&2; exit 1; }
  end=$(date +%s.%N)
  echo "start$1 $(echo "$end - $start" | bc)"
}
for ((k = 0; k < rounds; ++k)); do
  run 1
  run 2
  pair
  start 1
  start 2
done | awk '{ s[$1] += $2; n[$1]++ } END {
  t = s["1"] / n["1"]; t2 = s["2"] / n["2"]; p = s["pair"] / n["pair"]
  s1 = s["start1"] / n["start1"]; s2 = s["start2"] / n["start2"]
  printf "--jobs 1: %.2f s, --jobs 2: %.2f s, two --jobs 1 runs side by side: %.2f s; start-up: %.2f s (1 port), %.2f s (2) (means of %d)\n",
    t, t2, p, s1, s2, n["1"]
  printf "speed-up, --jobs 2 against --jobs 1: %.2fx\n", t / t2
  printf "bounds: the cores (2 x one run / the pair) %.2fx; the start-up, cases split evenly %.2fx\n", 2 * t / p, t / (s2 + (t - s1) / 2)
  b = t / (s2 + (p - s2) / 2)
  printf "bound: the start-up, then the cases at the pair'"'"'s rate: %.2fx; --jobs 2 gets %.0f%% of it\n", b, 100 * t / t2 / b }'
