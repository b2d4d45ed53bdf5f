#!/usr/bin/env bash
# (Re)builds the committed seed corpora: fuzz_seeds writes seed inputs (the
# golden vectors, generated cases, structured inputs, malformed lines), then
# each libFuzzer target merges them into corpus/<target>/, keeping only inputs
# that add coverage, named by the SHA-1 of their content. Existing files stay
# (inputs that once found a bug are never removed).
#   fuzz/make-corpus.sh   (needs the default and fuzz presets built)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$root/build/default/fuzz/fuzz_seeds" "$root/conformance/vectors" "$tmp"
for target in build_pack differential protocol context_parallel large_pack port_answer; do
  mkdir -p "$root/corpus/$target"
  before=$(ls "$root/corpus/$target" | wc -l)
  "$root/build/fuzz/fuzz/fuzz_$target" -merge=1 -timeout=10 -rss_limit_mb=4096 \
    "$root/corpus/$target" "$tmp/$target" >"$tmp/$target.log" 2>&1
  echo "corpus/$target: $before -> $(ls "$root/corpus/$target" | wc -l) inputs"
done
