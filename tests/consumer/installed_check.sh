#!/usr/bin/env bash
# The installed command line (CTest label package): installs BUILD to a fresh
# prefix and runs the prefix's `seqpack check`, which must find the installed
# ports and golden vectors from its own location, with the build tree moved
# out of its sight (no seqpack.paths next to the installed executable).
#   tests/consumer/installed_check.sh BUILD WORK
set -euo pipefail
build=$1
work=$2
rm -rf "$work"
mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
test ! -e "$work/prefix/bin/seqpack.paths"
"$work/prefix/bin/seqpack" check --cases 50 > "$work/check.log" 2>&1 || { tail -40 "$work/check.log"; exit 1; }
grep -E "^conformance: " "$work/check.log"
# Every installed port ran (a build without gpu/ installs none), and the packer
# runs replayed the installed vectors.
ports=0
if [[ -d "$work/prefix/libexec/seqpack" ]]; then
  ports=$(find "$work/prefix/libexec/seqpack" -maxdepth 1 -type f -perm -u+x | wc -l)
fi
runs=$(grep -c "^conformance: " "$work/check.log")
echo "installed ports: $ports, conformance runs: $runs"
test "$runs" -eq $(( (ports + 1) * 2 ))
grep -q "no golden vectors found" "$work/check.log" && { echo "the installed vectors were not found"; exit 1; }
grep -q -E "cases \([1-9][0-9]* vectors\)" "$work/check.log"
tail -1 "$work/check.log"
grep -q "^check: all passed" "$work/check.log"
