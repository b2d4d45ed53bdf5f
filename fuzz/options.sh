# Sourced by fuzz/ci.sh and fuzz/measure.sh: the libFuzzer flags of a target
# from fuzz/options/<target>.options (max_len, timeout, rss limit, dictionary),
# the same file ClusterFuzzLite reads, so every runner fuzzes alike.
#   libfuzzer_flags TARGET  -> prints the flags, one per line
libfuzzer_flags() {
  local root opts key value
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  opts="$root/fuzz/options/$1.options"
  [[ -f $opts ]] || { echo "no options file $opts" >&2; return 1; }
  while IFS=' =' read -r key value; do
    case $key in
      max_len|timeout|rss_limit_mb) echo "-$key=$value" ;;
      dict) echo "-dict=$root/fuzz/dict/$value" ;;
    esac
  done <"$opts"
}
