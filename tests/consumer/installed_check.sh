#!/usr/bin/env bash
# The installed package (CTest label package): installs BUILD to a fresh
# prefix, builds tests/consumer/components against it (every component but
# the reference, which run.sh covers), and runs the prefix's `seqpack check`, which must find the installed
# ports and golden vectors from its own location, with the build tree moved
# out of its sight (no seqpack.paths next to the installed executable).
#   tests/consumer/installed_check.sh BUILD WORK
set -euo pipefail
build=$1
work=$2
rm -rf "$work"
mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"

# Every other component, from a project outside the build (reference alone:
# run.sh).
here=$(cd "$(dirname "$0")" && pwd)
cmake -S "$here/components" -B "$work/components" -DCMAKE_PREFIX_PATH="$work/prefix" > "$work/components.log"
cmake --build "$work/components" -j2 >> "$work/components.log" || { tail -30 "$work/components.log"; exit 1; }
"$work/components/components_cpp"
"$work/components/components_omp"
if [[ -x "$work/components/components_torch" ]]; then "$work/components/components_torch"; fi
test ! -e "$work/prefix/bin/seqpack.paths"
"$work/prefix/bin/seqpack" check --cases 50 > "$work/check.log" 2>&1 || { tail -40 "$work/check.log"; exit 1; }
grep -E "^conformance: " "$work/check.log"
# Every installed port ran (a build without gpu/ installs none), and the packer
# runs replayed the installed vectors.
ports=0
if [[ -d "$work/prefix/libexec/seqpack" ]]; then
  ports=$(find "$work/prefix/libexec/seqpack" -maxdepth 1 -type f -perm -u+x ! -name seqpack-exhaustive-torch | wc -l)
fi
runs=$(grep -c "^conformance: " "$work/check.log")
echo "installed ports: $ports, conformance runs: $runs"
test "$runs" -eq $(( ports + 1 ))  # one run per port: vectors, packer and strict
grep -q "no golden vectors found" "$work/check.log" && { echo "the installed vectors were not found"; exit 1; }
grep -q -E "cases \([1-9][0-9]* vectors\)" "$work/check.log"
tail -1 "$work/check.log"
grep -q "^check: all passed" "$work/check.log"
# `seqpack exhaustive` from the install: every engine the install has (the
# LibTorch helper found in libexec/seqpack where it is installed).
"$work/prefix/bin/seqpack" exhaustive --scope tiny --limit 300 > "$work/exhaustive.log" 2>&1 ||
  { cat "$work/exhaustive.log"; exit 1; }
if [[ -x "$work/prefix/libexec/seqpack/seqpack-exhaustive-torch" ]]; then
  grep -q "LibTorch binding" "$work/exhaustive.log" || { echo "the installed helper did not run"; cat "$work/exhaustive.log"; exit 1; }
fi
grep -q "^PASS: every check held" "$work/exhaustive.log"
