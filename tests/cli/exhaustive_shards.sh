#!/usr/bin/env bash
# A scope split into shards, as a CI matrix splits it: each shard of the tiny
# scope against a port writes its report, and the merged report holds every
# case of the scope once (the sum of the shards is the scope's size, which
# `seqpack exhaustive --list` states); a missing shard is named.
#   tests/cli/exhaustive_shards.sh SEQPACK PORT WORK
set -euo pipefail
seqpack=$1 port=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
size=$("$seqpack" exhaustive --list | awk '$1 == "tiny" { print $NF }')
for i in 0 1 2; do
  "$seqpack" conform --exhaustive tiny --shard "$i/3" --no-vectors --jobs 1 --port "$port" \
    --report "$work/shard$i.json" > "$work/shard$i.txt"
done
"$seqpack" report merge "$work"/shard0.json "$work"/shard1.json "$work"/shard2.json > "$work/merged.txt"
grep -q "^merged: $size cases (0 vectors); 0 unexpected failures" "$work/merged.txt" ||
  { echo "the merged shards do not hold the $size cases of tiny:"; cat "$work/merged.txt"; exit 1; }
if "$seqpack" report merge "$work"/shard0.json "$work"/shard2.json > "$work/missing.txt" 2>&1; then
  echo "a merge without shard 1 passed:"; cat "$work/missing.txt"; exit 1
fi
grep -q "shards missing: 1$" "$work/missing.txt"
echo "tiny in 3 shards: $size cases merged"
