#!/usr/bin/env bash
# Installs BUILD's python component into a fresh prefix and imports the
# package from there alone (CTest python.install_imports_from_the_prefix):
#   tests/python/install_test.sh BUILD WORK SITE_DIR PYTHON
# SITE_DIR is SEQPACK_PYTHON_INSTALL_DIR (relative to the prefix).
set -euo pipefail
build=$1 work=$2 site=$3 python=$4
rm -rf "$work"
mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" --component python > "$work/install.log"
cd "$work"
env -u PYTHONPATH PYTHONPATH="$work/prefix/$site" "$python" -c '
import os, sys
import numpy as np
import seqpack, seqpack.testing, seqpack.strategies, seqpack.pytest_plugin
prefix = sys.argv[1]
for m in (seqpack, seqpack._core, seqpack._port):
    assert os.path.realpath(m.__file__).startswith(os.path.realpath(prefix) + "/"), m.__file__
pack = seqpack.build_pack(np.arange(3.0).reshape(3, 1), {"sample_lens": [3], "split_lens": [1, 2],
                          "attn_modes": ["causal", "full"], "und_token_indexes": [0]})
assert seqpack.get_all_seq(pack).tolist() == [[0.0], [1.0], [2.0]]
print("import seqpack from", os.path.dirname(seqpack.__file__))
' "$work/prefix"
