#!/usr/bin/env bash
# Sets up, builds and runs every test: the default preset, then the asan preset
# (ASan + UBSan). Pass preset names to run only those, e.g. `run-tests.sh default`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh

presets=("$@")
[[ ${#presets[@]} -gt 0 ]] || presets=(default asan)
for preset in "${presets[@]}"; do
  echo "== preset $preset"
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset"
  # The mutation check builds its own Release copies; once (default) is enough.
  if [[ "$preset" == default ]]; then ctest --preset "$preset"; else ctest --preset "$preset" -LE "mutation|package"; fi
done
