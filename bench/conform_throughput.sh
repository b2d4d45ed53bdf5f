#!/usr/bin/env bash
# The runner's throughput against `seqpack oracle`, as a ratio to the
# oracle's own answering cost in the same run (issue 14's speed target:
# 10,000 packer-profile cases/s on the 2-core machine).
#   bench/conform_throughput.sh [SEQPACK] [CASES]
# 1. `seqpack conform --profile packer --no-vectors --cases N` against the
#    oracle, whose requests are copied to a file on the way (tee);
# 2. the oracle alone answering that file (hello first), output discarded.
# Prints cases/s of each and the ratio conform time / oracle time: the
# runner's own cost (generation, expected results, encoding, pipe,
# comparison) is (ratio - 1) times the oracle's.
set -euo pipefail
seqpack=${1:-build/default/cli/seqpack}
cases=${2:-20000}
work=$(mktemp -d /tmp/seqpack-bench-XXXXXX)
trap 'rm -rf "$work"' EXIT
t0=$(date +%s.%N)
"$seqpack" conform --profile packer --no-vectors --cases "$cases" \
  --port "tee '$work/requests.jsonl' | '$seqpack' oracle" > "$work/conform.txt"
t1=$(date +%s.%N)
grep '^conform:' "$work/conform.txt"
lines=$(wc -l < "$work/requests.jsonl")
t2=$(date +%s.%N)
"$seqpack" oracle < "$work/requests.jsonl" > /dev/null
t3=$(date +%s.%N)
awk -v c="$cases" -v l="$lines" -v a="$t0" -v b="$t1" -v x="$t2" -v y="$t3" 'BEGIN {
  conform = b - a; oracle = y - x;
  printf "conform: %d cases in %.2f s = %.0f cases/s\n", c, conform, c / conform;
  printf "oracle alone: %d request lines in %.2f s = %.0f lines/s\n", l, oracle, l / oracle;
  printf "ratio conform / oracle: %.2f\n", conform / oracle }'
