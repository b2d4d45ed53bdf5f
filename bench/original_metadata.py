#!/usr/bin/env python3
"""Times the original module's prepare_sequence_pack_metadata (CPU torch) on
the benchmark layouts; prints JSON {config name: median seconds}.
Usage: original_metadata.py ORIGINAL"""
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ports", "python"))
import seqpack_port  # noqa: E402  (the adapter's loader: log stub, int32 indexing on torch < 2)
import torch  # noqa: E402

CONFIGS = {"8x(300+4000)x1024B": (8, 300, 4000), "64x(200+2000)x256B": (64, 200, 2000), "1x(12+100)x32B": (1, 12, 100)}


def main():
    mod = seqpack_port.load(sys.argv[1])
    seqpack_port.patch_int32_indexing(mod, torch)
    out = {}
    for name, (samples, causal, full) in CONFIGS.items():
        sample_lens = [causal + full] * samples
        split_lens = [causal, full] * samples
        modes = ["causal", "full"] * samples
        und = torch.tensor([s * (causal + full) + i for s in range(samples) for i in range(causal)], dtype=torch.int64)
        times = []
        for _ in range(25):
            t = time.perf_counter()
            mod.prepare_sequence_pack_metadata(sample_lens, split_lens, modes, und, torch.device("cpu"))
            times.append(time.perf_counter() - t)
        out[name] = statistics.median(times[5:])
    print(json.dumps(out))


if __name__ == "__main__":
    main()
