#!/usr/bin/env bash
# The overnight fuzzing job: builds the fuzz (libFuzzer, ASan + UBSan),
# fuzz-fast (libFuzzer, no sanitizer) and coverage presets, then runs
# fuzz/overnight.py (every target for --time seconds with --jobs workers, in
# rounds alternating the two builds; merge, triage, coverage, report).
#   fuzz/overnight.sh [--time SECONDS_PER_TARGET] [--jobs N] [--round SECONDS] [--state DIR] [--resume] [--targets T...]
# Report: <state>/report.md and report.json (default state build/fuzz-overnight).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
for preset in fuzz fuzz-fast coverage; do
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset"
done
exec python3 fuzz/overnight.py "$@"
