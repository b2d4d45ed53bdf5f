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
  # The original's mutation proof (label conformance-mutation) takes hours: the
  # overnight job runs it (fuzz/overnight.sh).
  if [[ "$preset" == default ]]; then ctest --preset "$preset" -LE conformance-mutation
  # The Python tests run Python, which no sanitizer sees: the default preset runs them.
  else ctest --preset "$preset" -LE "mutation|package|python"; fi
done
