#!/usr/bin/env bash
# Sets up, builds (default preset) and runs the main job, `seqpack check`.
# Arguments go to `seqpack check`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake --preset default >/dev/null
cmake --build --preset default >/dev/null
exec build/default/cli/seqpack check "$@"
