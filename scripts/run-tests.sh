#!/usr/bin/env bash
# Sets up, builds and runs every test: the default preset, then the asan preset
# (ASan + UBSan). Pass preset names to run only those, e.g. `run-tests.sh default`.
#   scripts/run-tests.sh [PRESET...]
#   scripts/run-tests.sh --slow-asan   (the overnight job: the asan preset's
#                                       tests that CI leaves out, alone)
# The asan preset leaves out the tests named in tests/slow-under-asan.txt (45 s
# or more each under ASan; the default preset runs them, and the overnight job
# runs them under ASan), so that CI stays within its time.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh

slow_only=0
[[ "${1:-}" == --slow-asan ]] && { slow_only=1; shift; }
presets=("$@")
[[ ${#presets[@]} -gt 0 ]] || presets=(default asan)
[[ $slow_only == 0 ]] || presets=(asan)

# tests/slow-under-asan.txt as one anchored regex; each name must match exactly
# one test of the build, or the run fails (a renamed test would otherwise leave
# both runs).
slow_regex() {
  local -a names
  mapfile -t names < <(sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^$/d' tests/slow-under-asan.txt)
  local regex="" missing=0 name
  for name in "${names[@]}"; do
    local one="^${name//./\\.}\$"
    if [[ $(ctest --preset "$1" -N -R "$one" | grep -c -E '^ *Test +#') != 1 ]]; then
      echo "tests/slow-under-asan.txt: '$name' matches no test of preset $1" >&2
      missing=1
    fi
    regex+="${regex:+|}${name//./\\.}"
  done
  [[ $missing == 0 ]] || exit 2
  echo "^(${regex})\$"
}

for preset in "${presets[@]}"; do
  echo "== preset $preset (at ${SECONDS} s)"
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset"
  # The mutation checks (labels mutation, the property catalogue's, about 4
  # minutes of both cores, and conformance-mutation, the original's, hours)
  # run in the overnight job (fuzz/overnight.sh), outside CI's time;
  # `ctest --preset default -L mutation` runs them here.
  if [[ "$preset" == default ]]; then ctest --preset "$preset" -LE mutation
  # The Python tests run Python, which no sanitizer sees: the default preset runs them.
  # (The regex in a variable first: a failed substitution inside an argument
  # would not stop the script.)
  else
    slow=$(slow_regex "$preset")
    if [[ $slow_only == 1 ]]; then ctest --preset "$preset" -LE "mutation|package|python" -R "$slow"
    else ctest --preset "$preset" -LE "mutation|package|python" -E "$slow"; fi
  fi
done
