#!/usr/bin/env bash
# A C++ port links the protocol library and neither the property suite, nor
# RapidCheck, nor GoogleTest (CTest label package). Reads the port's link
# command from a Ninja build and prints it.
#   tests/consumer/port_link_line.sh NINJA BUILD_DIR TARGET...
set -euo pipefail
ninja=$1 build=$2
shift 2
for target in "$@"; do
  line=$("$ninja" -C "$build" -t commands "$target" | tail -1)
  echo "$target: $line"
  grep -q -E "libseqpack_protocol\.a" <<<"$line"
  if grep -E -o "rapidcheck[^ ]*|gtest[^ ]*|gmock[^ ]*|libseqpack_properties[^ ]*|libseqpack_conformance[^ ]*" <<<"$line"; then
    echo "$target links the above, which a port must not"; exit 1
  fi
done
echo "ports link the protocol library only"
