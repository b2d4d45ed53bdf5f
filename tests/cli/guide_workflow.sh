#!/usr/bin/env bash
# Runs the `run:` steps of docs/ci/seqpack-port.yml locally, as a port's
# repository would on GitHub Actions: the checkout is this repository (no
# clone), the build is this build tree's seqpack, the port is `seqpack
# oracle`; then merges the shards' reports as docs/checking-your-port.md says.
#   guide_workflow.sh SEQPACK_SOURCE SEQPACK_BIN WORK
set -euo pipefail
src=$1 bin=$2 work=$3
rm -rf "$work" && mkdir -p "$work/seqpack/build/cli"
cd "$work"
ln -s "$src/conformance" seqpack/conformance
ln -s "$bin" seqpack/build/cli/seqpack
yml=$src/docs/ci/seqpack-port.yml
# The conform step's script, as the workflow has it, with its expressions and env.
script=$(awk '/- name: conform$/{f=1; next} f && /run: \|/{r=1; next} r && /^      - /{exit} r{sub(/^          /,""); print}' "$yml")
[[ -n "$script" ]] || { echo "FAIL: no conform step in $yml"; exit 1; }
grep -q -- '--junit' <<<"$script" || { echo "FAIL: the conform step writes no JUnit report"; exit 1; }
for shard in 0 1; do
  s=${script//\$\{\{ matrix.shard \}\}/$shard}
  s=${s//--cases 2000/--cases 100}  # a short run here; the workflow's 2,000 per profile on CI
  PORT="'$bin' oracle" KNOWN_FAILURES="" bash -euo pipefail -c "$s" > "conform-$shard.txt" \
    || { echo "FAIL: shard $shard"; cat "conform-$shard.txt"; exit 1; }
  [[ -s junit-$shard.xml && -s report-$shard.json ]] || { echo "FAIL: shard $shard wrote no reports"; exit 1; }
done
"$bin" report merge report-0.json report-1.json | tee merge.txt
# Every vector once across the shards (the file's, and the 216 bucket-edge
# cases by rule that run with them: PROTOCOL.md "Edge cases by rule"), and
# 100 random cases per profile.
vectors=$(( $(grep -c . "$src/conformance/vectors/vectors.jsonl") + 216 ))
grep -q "^merged: $((vectors + 200)) cases ($vectors vectors); 0 unexpected failures" merge.txt \
  || { echo "FAIL: merge (expected $vectors vectors)"; exit 1; }
# The guide's minimal Python port speaks the protocol: every case is answered
# (its build is the author's to write: an error class for each), no crash.
guide=$src/docs/checking-your-port.md
awk '/^### In Python/{f=1} f&&/^```python/{p=1;next} p&&/^```/{exit} p' "$guide" > minimal_port.py
set +e
"$bin" conform --port "/usr/bin/python3 minimal_port.py" --no-vectors --cases 50 > minimal.txt 2>&1
rc=$?
set -e
[[ $rc -eq 1 ]] || { echo "FAIL: the minimal port's run exits $rc"; cat minimal.txt; exit 1; }
grep -q 'group 1: port failure (crash, hang, answer too long or unclassified error)' minimal.txt || { echo "FAIL: minimal port"; cat minimal.txt; exit 1; }
grep -q '100 cases (0 vectors).* 0 crashes or hangs' minimal.txt || { echo "FAIL: minimal port"; cat minimal.txt; exit 1; }
echo "guide_workflow: ok"
