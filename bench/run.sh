#!/usr/bin/env bash
# Runs the benchmarks of each GPU host backend and times the original module's
# metadata building in the same run, then prints ratios:
#   data path: time / memcpy of the same bytes (lower is better, 1.0 = memcpy),
#              medians of 5 interleaved repetitions
#   metadata:  original's time / ours (higher is better)
#   omp / cpp: the OMP build's time over the serial CPP build's (the GPU
#              implementation), and on one sample of growing size the OMP
#              build's serial and parallel paths (its size threshold)
#   bench/run.sh [BUILD_DIR]   (default build/default; the original module: $SEQPACK_ORIGINAL, else ../shared/spec)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build/default}
original=${SEQPACK_ORIGINAL:-$here/../../shared/spec/000_a9109b401b6808be.txt}
tmp=$(mktemp -d)
for backend in cpp omp; do
  # Five repetitions, interleaved so that a noisy minute hits every benchmark
  # alike; the ratios use the medians.
  "$build/bench/pack_bench_$backend" --benchmark_min_time=0.1 --benchmark_repetitions=5 \
    --benchmark_enable_random_interleaving=true --benchmark_report_aggregates_only=true \
    --benchmark_format=json >"$tmp/$backend.json" 2>/dev/null
done
if [[ -f "$original" ]] && /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  /usr/bin/python3 "$here/original_metadata.py" "$original" >"$tmp/original.json"
else
  echo '{}' >"$tmp/original.json"
  echo "note: the original module or Debian's torch is missing; no metadata ratio" >&2
fi
python3 - "$tmp" <<'PY'
import json, sys, os
tmp = sys.argv[1]
orig = json.load(open(os.path.join(tmp, "original.json")))
print("| backend | shape | op | implementation | time (us) | ratio |")
print("| --- | --- | --- | --- | --- | --- |")
for backend in ("cpp", "omp"):
    runs = {b["run_name"]: b["real_time"] for b in json.load(open(os.path.join(tmp, backend + ".json")))["benchmarks"]
            if b.get("aggregate_name") == "median"}
    for shape in ("8x(300+4000)x1024B", "64x(200+2000)x256B", "1x(12+100)x32B"):
        base = runs["memcpy/" + shape]
        print(f"| {backend} | {shape} | memcpy | - | {base:.1f} | 1.00x |")
        for op in ("pack", "get_all_seq"):
            for impl in ("reference", "gpu"):
                t = runs[f"{op}/{impl}/{shape}"]
                print(f"| {backend} | {shape} | {op} | {impl} | {t:.1f} | {t / base:.2f}x memcpy |")
        for impl in ("reference", "gpu"):
            t = runs[f"metadata/{impl}/{shape}"]
            ratio = f"{orig[shape] * 1e6 / t:.0f}x faster than the original ({orig[shape] * 1e6:.0f} us)" if shape in orig else "-"
            print(f"| {backend} | {shape} | metadata | {impl} | {t:.1f} | {ratio} |")

def medians(backend):
    return {b["run_name"]: b["real_time"] for b in json.load(open(os.path.join(tmp, backend + ".json")))["benchmarks"]
            if b.get("aggregate_name") == "median"}
cpp, omp = medians("cpp"), medians("omp")
print()
print("| shape | op | cpp (us) | omp (us) | omp / cpp |")
print("| --- | --- | --- | --- | --- |")
for shape in ("8x(300+4000)x1024B", "64x(200+2000)x256B", "1x(12+100)x32B"):
    for op in ("pack", "get_all_seq", "metadata"):
        c, o = cpp[f"{op}/gpu/{shape}"], omp[f"{op}/gpu/{shape}"]
        print(f"| {shape} | {op} | {c:.1f} | {o:.1f} | {o / c:.2f}x |")
print()
print("| one sample | cpp (us) | omp (us) | omp / cpp | omp serial / cpp | omp parallel / cpp |")
print("| --- | --- | --- | --- | --- | --- |")
for name in sorted({k.split("/")[-1] for k in cpp if k.startswith("sweep/")}, key=lambda n: int(n[3:].split("+")[0])):
    c = cpp[f"sweep/pack/gpu/{name}"]
    o, s, p = (omp[f"sweep/pack/{v}/{name}"] for v in ("gpu", "gpu-serial", "gpu-parallel"))
    print(f"| {name} | {c:.1f} | {o:.1f} | {o / c:.2f}x | {s / c:.2f}x | {p / c:.2f}x |")
PY
rm -rf "$tmp"
