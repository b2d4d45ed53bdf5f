#!/usr/bin/env bash
# The house habits, checked (CI runs this after the tests):
#   - every C++ and CUDA source is laid out by .clang-format (clang-format-14);
#   - no library includes or links one above it (scripts/check_layers.py);
#   - the reference, protocol and conformance libraries pass .clang-tidy's checks
#     (clang-tidy-14, over BUILD_DIR's compile_commands.json).
#   scripts/lint.sh [BUILD_DIR]   (default build/default; configured if absent)
#   scripts/lint.sh --fix         (rewrites the layout in place; no tidy)
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t sources < <(git ls-files '*.cpp' '*.hpp' '*.cu' '*.cuh' '*.h' | grep -v '^corpus/')
if [[ "${1:-}" == "--fix" ]]; then
  clang-format-14 -i "${sources[@]}"
  exit 0
fi
build=${1:-build/default}

echo "== clang-format: ${#sources[@]} files"
if ! clang-format-14 --dry-run --Werror "${sources[@]}" 2> >(head -40 >&2); then
  echo "lint: files differ from .clang-format; scripts/lint.sh --fix rewrites them" >&2
  exit 1
fi

echo "== layers (README.md's Layers line)"
python3 scripts/check_layers.py .

[[ -f "$build/compile_commands.json" ]] || cmake --preset default >/dev/null
mapfile -t tidy < <(git ls-files 'reference/src/*.cpp' 'protocol/src/*.cpp' 'conformance/src/*.cpp')
echo "== clang-tidy: ${#tidy[@]} files of reference/, protocol/ and conformance/"
status=0
# stderr carries clang-tidy's own errors; only its "N warnings generated" count is dropped.
printf '%s\n' "${tidy[@]}" | xargs -P 2 -n 1 clang-tidy-14 -p "$build" --quiet \
  2> >(grep -v -E '^[0-9]+ warnings? (and [0-9]+ errors? )?generated\.$' >&2) || status=1
if [[ $status -ne 0 ]]; then
  echo "lint: clang-tidy found the problems above" >&2
  exit 1
fi
echo "lint: clean"
