#!/usr/bin/env bash
# The mutation check: plants each fault of mutants.txt in a copy of the
# sources, rebuilds the property suite against it, runs the suite, and fails
# if any mutant survives. Prints the mutation score.
#
#   tests/properties/mutation/run.sh SOURCE_DIR WORK_DIR [MUTANT_NAME...]
#
# With SEQPACK_MUTATION_MODE=exhaustive it prints the mutant table of
# docs/exhaustive.md instead: for each mutant, which bounded-exhaustive scope
# kills it (property_exhaustive --scope tiny, then small; medium too with
# SEQPACK_EXHAUSTIVE_MEDIUM=1), and whether the default random run kills it
# at the same number of cases (property_exhaustive --random N); it fails on
# no mutant (a survivor there is a row of the table, explained in the docs).
#
# SEQPACK_MUTATION_PARAMS sets RapidCheck's budget per mutant run
# (default "max_success=300 max_size=100").
set -euo pipefail
src=$(cd "$1" && pwd)
work=$2
shift 2
only=("$@")
params=${SEQPACK_MUTATION_PARAMS:-"max_success=300 max_size=100"}
mkdir -p "$work"
work=$(cd "$work" && pwd)
# Every find text must still be in its file, before minutes of building.
python3 "$src/tests/properties/mutation/check_finds.py" "$src"
tree=$work/src
build=$work/build

# A pristine copy of the sources; mutated files are restored from $src.
rm -rf "$tree"
mkdir -p "$tree"
# Everything but build outputs and git data.
tar -C "$src" --exclude=./build --exclude=./.git -cf - . | tar -C "$tree" -xf -
# Fresh mtimes, so that objects a previous run built from a mutant are rebuilt.
find "$tree" -type f -exec touch {} +
cmake -S "$tree" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSEQPACK_BUILD_GPU=OFF -DSEQPACK_BUILD_CLI=OFF \
  -DSEQPACK_INSTALL=OFF >/dev/null
mode=${SEQPACK_MUTATION_MODE:-suite}
target=property_test
[[ "$mode" == exhaustive ]] && target=property_exhaustive
cmake --build "$build" --target $target -j2 >/dev/null

# Parse mutants.txt into parallel arrays of blocks.
names=()
declare -A edits
current=""
file=""
find_text=""
while IFS= read -r line || [[ -n "$line" ]]; do
  case "$line" in
    "#"*|"") ;;
    "name: "*) current=${line#name: }; names+=("$current"); edits[$current]="" ;;
    "file: "*) file=${line#file: } ;;
    "find: "*) find_text=${line#find: } ;;
    "replace: "*) edits[$current]+="$file"$'\x1f'"$find_text"$'\x1f'"${line#replace: }"$'\x1e' ;;
  esac
done < "$src/tests/properties/mutation/mutants.txt"

apply() {  # file find replace -> replaces exactly one occurrence
  python3 - "$tree/$1" "$2" "$3" <<'PY'
import sys
path, find, repl = sys.argv[1:]
text = open(path).read()
n = text.count(find)
if n != 1:
    sys.exit(f"{path}: expected the find text once, found it {n} times: {find}")
open(path, "w").write(text.replace(find, repl))
PY
}

# One row of the mutant table: the first scope whose every case kills the
# mutant, and the random run at each scope's number of cases (both cores:
# the exhaustive and the random runs side by side).
tool=$build/tests/properties/property_exhaustive
scope_names=(tiny small)
[[ -n "${SEQPACK_EXHAUSTIVE_MEDIUM:-}" ]] && scope_names+=(medium)
exhaustive_row() {
  local row="" killed_at="" s
  for s in "${scope_names[@]}"; do
    timeout 7200 "$tool" --random "$("$tool" --size "$s")" > "$work/$name.random-$s.log" 2>&1 &
    local pid=$!
    if [[ -z "$killed_at" ]]; then
      if ! timeout 7200 "$tool" --scope "$s" > "$work/$name.scope-$s.log" 2>&1; then killed_at=$s; fi
    fi
    wait $pid && row+=" random@$s: survived;" || row+=" random@$s: $(sed 's/ of .* by / by /' "$work/$name.random-$s.log");"
  done
  if [[ -n "$killed_at" ]]; then
    echo "exhaustive killed at $killed_at ($(cat "$work/$name.scope-$killed_at.log"));$row"
  else
    echo "exhaustive: survived every scope;$row"
  fi
}

killed=0
survived=()
total=0
for name in "${names[@]}"; do
  if [[ ${#only[@]} -gt 0 && ! " ${only[*]} " =~ " $name " ]]; then continue; fi
  total=$((total + 1))
  touched=()
  IFS=$'\x1e' read -r -d '' -a list <<< "${edits[$name]}" || true
  for entry in "${list[@]}"; do
    [[ -z "${entry//$'\n'/}" ]] && continue
    IFS=$'\x1f' read -r f fi re <<< "$entry"
    apply "$f" "$fi" "$re"
    touched+=("$f")
  done
  outcome=""
  # A consequence_* mutant must be killed by the consequence family alone (the
  # fault it plants is what that family exists for); the others run the rest
  # of the catalogue, which keeps each run short (the consequence family runs
  # attention over every case).
  if [[ "$name" == consequence_* ]]; then filter='*consequence*'; else filter='-*consequence*:Findings.*'; fi
  if [[ "$mode" == exhaustive ]]; then
    if ! cmake --build "$build" --target property_exhaustive -j2 > "$work/$name.build.log" 2>&1; then
      outcome="does not compile (see $work/$name.build.log)"
    else
      row=$(exhaustive_row)
      if [[ "$row" == "exhaustive killed"* ]]; then outcome="killed: $row"; else outcome="SURVIVED: $row"; fi
    fi
  elif ! cmake --build "$build" --target property_test -j2 > "$work/$name.build.log" 2>&1; then
    outcome="does not compile (see $work/$name.build.log)"
  elif RC_PARAMS="$params" timeout 300 "$build/tests/properties/property_test" --gtest_brief=1 \
    --gtest_filter="$filter" > "$work/$name.log" 2>&1; then
    outcome="SURVIVED"
  else
    killers=$(grep -E '^\[  FAILED  \] [A-Za-z]' "$work/$name.log" | sed 's/\[  FAILED  \] //; s/ (.*//; s/^Catalogue\.//' | sort -u | tr '\n' ' ' || true)
    outcome="killed by ${killers:-a crash or timeout}"
  fi
  for f in "${touched[@]}"; do cp "$src/$f" "$tree/$f"; touch "$tree/$f"; done
  case "$outcome" in
    killed*) killed=$((killed + 1)) ;;
    *) survived+=("$name: $outcome") ;;
  esac
  printf '%-40s %s\n' "$name" "$outcome"
done

echo "mutation score: $killed/$total killed"
[[ "$mode" == exhaustive ]] && exit 0
if [[ ${#survived[@]} -gt 0 ]]; then
  printf 'not killed: %s\n' "${survived[@]}"
  exit 1
fi
