#!/usr/bin/env bash
# scripts/check_layers.py catches what it exists for: a copy of the libraries
# with one upward include (the reference including the runner) and one with an
# upward link (the protocol linking the property suite) must each fail, naming
# the file; the copy as it is must pass.
#   tests/scripts/layers_test.sh SOURCE_DIR
set -euo pipefail
src=$(cd "$1" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
copy() {
  rm -rf "$work/tree"
  mkdir -p "$work/tree"
  (cd "$src" && git ls-files -z README.md common reference protocol attention properties conformance gpu torch cli ports fuzz python bench \
    | grep -zv '^corpus/' | xargs -0 tar -cf -) | tar -C "$work/tree" -xf -
}
expect_failure() {  # what, expected text
  if out=$(python3 "$src/scripts/check_layers.py" "$work/tree" 2>&1); then
    echo "FAIL: check_layers passed with $1" >&2
    exit 1
  fi
  grep -qF "$2" <<<"$out" || { echo "FAIL: $1: the report does not name $2:" >&2; echo "$out" >&2; exit 1; }
  echo "caught $1: $(head -1 <<<"$out")"
}

copy
python3 "$src/scripts/check_layers.py" "$work/tree"

sed -i '0,/#include "seqpack\/reference\/pack.hpp"/s//#include "seqpack\/reference\/pack.hpp"\n#include "seqpack\/conformance\/runner.hpp"/' \
  "$work/tree/reference/src/pack.cpp"
grep -q 'seqpack/conformance/runner.hpp' "$work/tree/reference/src/pack.cpp" || { echo "FAIL: the include was not planted" >&2; exit 1; }
expect_failure "an upward include" "reference/src/pack.cpp"

copy
echo 'target_link_libraries(seqpack_protocol PUBLIC seqpack::properties)' >>"$work/tree/protocol/CMakeLists.txt"
expect_failure "an upward link" "protocol/CMakeLists.txt"

copy
sed -i 's/^Layers: common → reference/Layers: reference → common/' "$work/tree/README.md"
grep -q '^Layers: reference → common' "$work/tree/README.md" || { echo "FAIL: the order was not planted" >&2; exit 1; }
expect_failure "a Layers line in the wrong order" "reference/"
echo "layers_test: 3/3 planted violations caught"
