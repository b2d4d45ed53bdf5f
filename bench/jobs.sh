#!/usr/bin/env bash
# What --jobs buys (issue 28's target: at least 1.7x on 2 cores): the default
# run of the original module through the Python adapter (vectors, both
# profiles, its known failures) at --jobs 1 and --jobs 2, alternated A B A B
# in one go, and the ratio of the mean wall times. Run it on an otherwise
# idle machine: the figure is a ratio of two runs on the same cores.
# The same rounds time two --jobs 1 runs side by side ("pair"): twice the
# work of one run, on the same cores. Half the pair's time is what --jobs 2
# could reach if splitting the cases cost nothing (no second start-up, no
# idle port), so 2 x one run / pair is the speed-up these cores allow this
# workload; the ratio of the two speed-ups is the share of it --jobs 2 gets.
# And the port's start-up alone ("start": the port started, its hello read,
# no case): the N ports start side by side, so a start-up is paid once in
# wall time whatever N, and with S the start-up and T one port's run, no
# split of the cases between 2 ports beats T / (S + (T - S) / 2).
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
pair() {  # two --jobs 1 runs at once: prints "pair seconds"
  local start end
  start=$(date +%s.%N)
  run 1 >/dev/null &
  run 1 >/dev/null
  wait $! || exit 1
  end=$(date +%s.%N)
  echo "pair $(echo "$end - $start" | bc)"
}
start() {  # the port's start-up: prints "start seconds"
  local start end
  start=$(date +%s.%N)
  "$seqpack" conform --port "$port" --no-vectors --cases 0 >/dev/null 2>&1 ||
    { echo "bench/jobs.sh: the port does not start" >&2; exit 1; }
  end=$(date +%s.%N)
  echo "start $(echo "$end - $start" | bc)"
}
for ((k = 0; k < rounds; ++k)); do
  run 1
  run 2
  pair
  start
done | awk '{ s[$1] += $2; n[$1]++ } END {
  printf "--jobs 1: %.2f s, --jobs 2: %.2f s, two --jobs 1 runs side by side: %.2f s (means of %d)\n",
    s["1"] / n["1"], s["2"] / n["2"], s["pair"] / n["pair"], n["1"]
  up = s["1"] / n["1"] / (s["2"] / n["2"]); most = 2 * s["1"] / n["1"] / (s["pair"] / n["pair"])
  printf "speed-up, --jobs 2 against --jobs 1: %.2fx\n", up
  printf "what these cores allow (2 x one run / the pair): %.2fx; --jobs 2 gets %.0f%% of it\n", most, 100 * up / most
  t = s["1"] / n["1"]; st = s["start"] / n["start"]
  printf "the port starts in %.2f s: an even split of the rest between 2 ports gives at most %.2fx\n", st, t / (st + (t - st) / 2) }'
