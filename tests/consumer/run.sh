#!/usr/bin/env bash
# The package check (CTest label package): builds the reference alone from
# SOURCE with every other option off (a C++17 compiler and CMake, nothing
# else), installs its `reference` component to a fresh prefix, builds the
# consumer project of this folder against that prefix with find_package, runs
# it, and checks that nothing but the prefix and the system reached the
# consumer's include path (no RapidCheck, Thrust or OpenMP).
#   tests/consumer/run.sh SOURCE WORK
set -euo pipefail
src=$(cd "$1" && pwd)
work=$2
rm -rf "$work"
mkdir -p "$work"
work=$(cd "$work" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
generator=()
if command -v ninja >/dev/null; then generator=(-G Ninja); fi

echo "== the reference alone"
cmake -S "$src" -B "$work/build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DSEQPACK_BUILD_GPU=OFF -DSEQPACK_BUILD_CONFORMANCE=OFF -DSEQPACK_BUILD_TESTS=OFF \
  -DSEQPACK_BUILD_CLI=OFF -DSEQPACK_BUILD_FUZZ=OFF -DSEQPACK_BUILD_BENCH=OFF -DSEQPACK_BUILD_TORCH=OFF \
  > "$work/configure.log"
# Nothing but the reference may have been configured: no dependency was looked for.
if grep -E "Found (Thrust|OpenMP|GTest|rapidcheck|nlohmann|Torch|CLI11)" "$work/configure.log"; then
  echo "the reference alone looked for a dependency"; exit 1
fi
grep "installable components" "$work/configure.log"
cmake --build "$work/build" -j2
targets=$(cmake --build "$work/build" --target help | grep -E -c ': (phony|EXECUTABLE|STATIC_LIBRARY)' || true)
echo "targets in the build: $targets"

echo "== install the reference component to a fresh prefix"
cmake --install "$work/build" --prefix "$work/prefix" --component reference
find "$work/prefix" -type f | sed "s|$work/prefix/||" | sort

echo "== the consumer project, by find_package"
cmake -S "$here" -B "$work/consumer" "${generator[@]}" -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_EXPORT_COMPILE_COMMANDS=ON > "$work/consumer-configure.log"
cmake --build "$work/consumer"
# The consumer's compile line: the prefix's include directory and nothing of
# the dependencies the rest of seqpack uses.
compile=$(grep '"command"' "$work/consumer/compile_commands.json" | sed 's/ -c [^ ]*main.cpp.*//')
echo "$compile"
includes=$(grep -o -E -- '(-I|-isystem )[^ ]+' <<<"$compile" | sed 's/^-isystem /-I/' | sort -u)
echo "include path: $includes"
if [[ "$includes" != "-I$work/prefix/include" ]]; then
  echo "the consumer's include path reaches beyond the prefix"; exit 1
fi
if grep -q -E -- "-fopenmp|-D(THRUST|CUB|RC_)" <<<"$compile"; then
  echo "the consumer's compile line carries another package's flags"; exit 1
fi
"$work/consumer/consumer"
