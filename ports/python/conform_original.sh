#!/usr/bin/env bash
# Runs `seqpack conform` against the original Python module through the
# adapter, with its known failures. Exits 77 (CTest: skipped) when the
# original or Debian's torch is missing.
#   conform_original.sh SEQPACK ORIGINAL PROFILE REPORT [extra conform options]
set -euo pipefail
# SEQPACK_ORIGINAL in the environment overrides the path CMake passes.
seqpack=$1 original=${SEQPACK_ORIGINAL:-$2} profile=$3 report=$4
shift 4
here=$(cd "$(dirname "$0")" && pwd)
if [[ ! -f "$original" ]]; then echo "skipped: the original module $original is absent (SEQPACK_ORIGINAL names it)"; exit 77; fi
if ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then echo "skipped: /usr/bin/python3 has no torch"; exit 77; fi
exec "$seqpack" conform --port "/usr/bin/python3 '$here/seqpack_port.py' '$original'" --profile "$profile" \
  --known-failures "$here/original.known_failures" --report "$report" "$@"
