#!/usr/bin/env bash
# Installs the Debian packages seqpack needs, when they are missing.
# Idempotent, and silent when there is nothing to do. CUDA 13 is expected at
# /usr/local/cuda and is not installed here.
set -euo pipefail

packages=(
  cmake ninja-build g++ git
  googletest libgtest-dev libgmock-dev
  librapidcheck-dev
  libtorch-dev python3-torch python3-coverage python3-jsonschema python3-yaml
  python3-dev pybind11-dev python3-numpy python3-hypothesis python3-pytest
  nlohmann-json3-dev libcli11-dev libbenchmark-dev
  clang-14 libclang-rt-14-dev llvm-14 clang-format-14 clang-tidy-14
  zip
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "setup: installing ${missing[*]}" >&2
sudo=""
[[ $(id -u) -eq 0 ]] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done" >&2
