#!/usr/bin/env bash
# The verdict through the command line: replay, oracle --case, --fail-fast,
# --shard with report merge, --junit read by Python's JUnit-capable XML
# parser (xml.etree). Usage: verdict_cli.sh SEQPACK WRONG_PORT VECTORS_DIR WORK
set -euo pipefail
seqpack=$1 wrong=$2 vectors=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }
py=/usr/bin/python3
[[ -x $py ]] || { echo "skipped: /usr/bin/python3 is absent (it reads the JUnit report)"; exit 77; }

# PROTOCOL.md's example case: rendered as row ids, under its own id.
cat > "$work/c1.json" <<'CASE'
{"type":"case","id":"c1","layout":{"sample_lens":[5,5],"split_lens":[2,3,1,4],"attn_modes":["causal","full","causal","full"],"und_token_indexes":[0,1,5]},"rows":10,"options":{"cp_world_size":1,"pad_for_cuda_graphs":false,"is_image_batch":false,"full_seq_alignment":4,"causal_seq_alignment":4,"pad_segment_only_when_padded":false},"graph_bounds":{"image":[0,0],"video":[0,0]}}
CASE
out=$("$seqpack" oracle --case "$work/c1.json")
grep -q '^case c1 \[valid\]' <<<"$out" || fail "oracle --case does not name the case c1: $out"
grep -q 'causal   4 rows (3 real) \[0 1 5 \.\]' <<<"$out" || fail "oracle --case shows no row ids: $out"
grep -q 'full     8 rows (7 real) \[2 3 4 6 7 8 9 \.\]' <<<"$out" || fail "oracle --case shows no row ids: $out"
grep -q '"id":"c1"' <<<"$out" || fail "the result line is not the case's id"

# A wrong port's saved minimal cases replay: FAIL against it, PASS against the oracle.
set +e
"$seqpack" conform --port "'$wrong' two_faults" --profile strict --cases 300 --no-vectors \
  --save-failures "$work/saved" --junit "$work/run.xml" > "$work/conform.txt"
rc=$?
set -e
[[ $rc -eq 1 ]] || fail "conform exits $rc on a wrong port, not 1"
n=$(ls "$work/saved" | wc -l)
[[ $n -eq 2 ]] || fail "$n saved cases for the two faults, not 2 (one per group)"
set +e
"$seqpack" replay "$work/saved" --port "'$wrong' two_faults" > "$work/replay.txt"
rc=$?
set -e
[[ $rc -eq 1 ]] || fail "replay exits $rc on failing cases, not 1"
grep -q '^FAIL .*: error class invalid_layout' "$work/replay.txt" || fail "replay: no error diff"
grep -q '^FAIL .*: pack.pad_segment.max_sample_len$' "$work/replay.txt" || fail "replay: no value diff"
grep -q 'pad seg  causal' "$work/replay.txt" || fail "replay: no rendering of the reference's pack"
"$seqpack" replay "$work/saved" --port "'$seqpack' oracle" > "$work/replay_ok.txt" || fail "replay against the oracle fails"
grep -q '^replay: 2 cases, 0 failing' "$work/replay_ok.txt" || fail "replay: $(cat "$work/replay_ok.txt")"

# --fail-fast: one group, the run stopped.
set +e
"$seqpack" conform --port "'$wrong' two_faults" --profile strict --cases 1500 --no-vectors --fail-fast > "$work/ff.txt"
rc=$?
set -e
[[ $rc -eq 1 ]] || fail "--fail-fast exits $rc"
grep -q 'run stopped at --max-failures 1' "$work/ff.txt" || fail "--fail-fast did not stop: $(tail -3 "$work/ff.txt")"
# Bad options exit 2 with the option named.
for bad in 3/3 1/0 x/2 -1/2 1/; do
  set +e
  msg=$("$seqpack" conform --port true --shard "$bad" 2>&1 >/dev/null)
  rc=$?
  set -e
  [[ $rc -eq 2 ]] || fail "--shard $bad exits $rc, not 2"
  grep -q -- "--shard" <<<"$msg" || fail "--shard $bad: the error names no option: $msg"
done

# Three shards cover the run once: their merged report counts what the whole run does.
for i in 0 1 2; do
  "$seqpack" conform --port "'$wrong' max_sample_len" --profile packer --cases 300 --no-vectors --shard "$i/3" \
    --report "$work/shard$i.json" > "$work/shard$i.txt" || true
done
"$seqpack" conform --port "'$wrong' max_sample_len" --profile packer --cases 300 --no-vectors \
  --report "$work/whole.json" > "$work/whole.txt" || true
set +e
"$seqpack" report merge "$work/shard0.json" "$work/shard1.json" "$work/shard2.json" --out "$work/merged.json" \
  > "$work/merge.txt"
rc=$?
set -e
[[ $rc -eq 1 ]] || fail "report merge exits $rc on failing shards, not 1"
set +e
"$seqpack" report merge "$work/shard0.json" "$work/shard1.json" > /dev/null
rc=$?
set -e
[[ $rc -eq 1 ]] || fail "report merge of 2 of 3 shards exits $rc, not 1"
"$py" - "$work" <<'PY'
import json, sys
import xml.etree.ElementTree as ET
work = sys.argv[1]
merged = json.load(open(work + "/merged.json"))
whole = json.load(open(work + "/whole.json"))
assert merged["cases"] == whole["cases"] == 300, (merged["cases"], whole["cases"])
assert merged["unexpected_failures"] == whole["unexpected_failures"] > 0
assert [g["signature"] for g in merged["groups"]] == [g["signature"] for g in whole["groups"]]
assert merged["groups"][0]["count"] == whole["groups"][0]["count"]
# The JUnit report: one testcase per failure group, failing, with the diff.
root = ET.parse(work + "/run.xml").getroot()
cases = list(root.iter("testcase"))
groups = [c for c in cases if c.get("classname") == "failure-groups"]
assert len(groups) == 2, [c.get("name") for c in cases]
for g in groups:
    f = g.find("failure")
    assert f is not None and "first difference" in f.text, g.get("name")
assert int(root.get("failures")) == 2, root.attrib
print("junit: %d testcases, %d failure groups" % (len(cases), len(groups)))
PY
# With the golden vectors: one testcase per vector family, the oracle passing all.
"$seqpack" conform --port "'$seqpack' oracle" --profile packer --cases 50 --vectors "$vectors" \
  --junit "$work/vectors.xml" > /dev/null || fail "the oracle does not conform"
"$py" - "$work/vectors.xml" <<'PY'
import sys
import xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
fams = {c.get("name").split(" ")[0] for c in root.iter("testcase") if c.get("classname") == "vectors"}
for want in ("worked-example-E", "edge", "error", "options", "packer", "strict", "pairing", "session"):
    assert want in fams, (want, sorted(fams))
assert root.get("failures") == "0", root.attrib
print("junit: vector families", sorted(fams))
PY
echo "verdict_cli: ok"
