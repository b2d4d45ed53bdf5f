#!/usr/bin/env python3
"""The consequence check of the mutation suite: hand-written one-line faults
of the original module, each judged end to end by `seqpack conform` (through
the Python adapter, with the original's known failures) under every consumer
profile, against the severity it must get there.

Usage:
  consequence_mutants.py --seqpack BIN [--original FILE] [--cases N] [--only ID ...]
                         [--profiles spec/fa3,...] [--work DIR]

Each mutant replaces one exact piece of the original's text (it must occur
once). Its severity under a profile is the worst of its failure groups' in
the JSON report (`none` when no group: the mutant went unseen). The expected
severities are derived in CONSUMERS.md's terms, one reason each below; the
script prints a table of expected and judged, and exits 1 on any mismatch
(2 when it cannot run: the original or /usr/bin/python3's torch missing, 77
for CTest's skip).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PYTHON = "/usr/bin/python3"
PROFILES = ("spec/fa3", "spec/fa2", "cosmos-5eee9ed/fa3", "cosmos-5eee9ed/fa2")
ORDER = ("none", "metadata-only", "not-judged", "crash-or-refusal", "nan-only", "wrong-output",
         "silent-wrong-gradient")

# id, old text, new text, expected severity per profile (spec/fa3, spec/fa2,
# cosmos/fa3, cosmos/fa2), why.
MUTANTS = (
    ("int64_offsets",
     "torch.tensor(offsets, dtype=torch.int32, device=device),",
     "torch.tensor(offsets, dtype=torch.int64, device=device),",
     ("crash-or-refusal",) * 4,
     "every varlen call takes int32 cu_seqlens only (the dtypes view): refused before any kernel"),
    ("gcd_for_lcm",
     "alignment = math.lcm(alignment, cp_world_size)",
     "alignment = math.gcd(alignment, cp_world_size)",
     ("crash-or-refusal",) * 4,
     "streams no longer divide by cp: the CP sharding asserts"),
    ("local_counts_ignore_rank",
     "return max(0, min(shard_len, num_real_tokens - rank * shard_len))",
     "return max(0, min(shard_len, num_real_tokens))",
     ("metadata-only", "metadata-only", "silent-wrong-gradient", "silent-wrong-gradient"),
     "later ranks count padding rows as real: the spec's layer reads them through a masked MLP, harmless on a "
     "whole pack; the real consumer's MoE routes them and counts them in its load-balancing statistics"),
    ("all_seq_padded_plain_offsets",
     'return out, pack["_sample_offsets_pad_segment"], pack["max_sample_len_pad_segment"]',
     'return out, pack["sample_offsets"], pack["max_sample_len"]',
     ("crash-or-refusal", "crash-or-refusal", "metadata-only", "metadata-only"),
     "the spec's dense GEN pass gets one key segment fewer than query segments (refused); the real consumer "
     "never calls get_all_seq_padded at 5eee9ed"),
    ("padding_id_last_sample",
     'padding_sample_id = meta["sample_offsets"].shape[0] - 1',
     'padding_sample_id = meta["sample_offsets"].shape[0] - 2',
     ("wrong-output", "wrong-output", "metadata-only", "metadata-only"),
     "the spec's FlexAttention route masks by the pack's ids: the last sample's real GEN rows attend padding; "
     "the real consumer builds its ids from the offsets and masks padding out of the MoE statistics"),
    ("full_pad_segment_one_short",
     'meta["_full_only_seq_offsets"], int(full_only_seq.shape[0])\n        )',
     'meta["_full_only_seq_offsets"], int(full_only_seq.shape[0]) - 1\n        )',
     ("silent-wrong-gradient",) * 4,
     "the last full padding row lies outside every segment: unwritten output, dq and dk/dv; its garbage reaches "
     "the GEN projections' gradients (three-way reads the pad segment in the real consumer too)"),
    ("max_full_pad_real",
     'pack["max_full_len_pad_segment"] = max(meta["max_full_len"], pad_full)',
     'pack["max_full_len_pad_segment"] = meta["max_full_len"]',
     ("metadata-only", "silent-wrong-gradient", "crash-or-refusal", "silent-wrong-gradient"),
     "a pad segment longer than the maximum the grid is sized from: FA2's 64-row blocks drop its rows past the "
     "last launched block; FA3 counts blocks from cu_seqlens, but a pack with no GEN token now passes the real "
     "consumer's GEN self-attention maxima of 0, which its flash3 wrapper refuses as an empty batch"),
)


def worst(report):
    groups = report.get("groups", [])
    sev = "none"
    for g in groups:
        s = g.get("severity") or "none"
        if ORDER.index(s) > ORDER.index(sev):
            sev = s
    return sev


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seqpack", required=True)
    ap.add_argument("--original", default=os.environ.get("SEQPACK_ORIGINAL",
                                                         os.path.join(ROOT, "..", "shared", "spec",
                                                                      "000_a9109b401b6808be.txt")))
    ap.add_argument("--cases", type=int, default=100, help="random cases per profile (the vectors run too)")
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--profiles", default=",".join(PROFILES))
    ap.add_argument("--work", default=None)
    args = ap.parse_args()
    if not os.path.isfile(args.original):
        print("skipped: the original module %s is absent (SEQPACK_ORIGINAL names it)" % args.original)
        return 77
    if subprocess.run([PYTHON, "-c", "import torch"], capture_output=True).returncode != 0:
        print("skipped: %s has no torch" % PYTHON)
        return 77
    with open(args.original, encoding="utf-8") as f:
        text = f.read()
    profiles = [p for p in args.profiles.split(",") if p]
    for p in profiles:
        if p not in PROFILES:
            print("--profiles: %r is not one of %s" % (p, ", ".join(PROFILES)))
            return 2
    work = args.work or tempfile.mkdtemp(prefix="seqpack-consequence-mutants-")
    os.makedirs(work, exist_ok=True)
    failures = 0
    print("| mutant | " + " | ".join(profiles) + " |")
    print("| --- |" + " --- |" * len(profiles))
    for ident, old, new, expected, why in MUTANTS:
        if args.only and ident not in args.only:
            continue
        if text.count(old) != 1:
            print("%s: the text to mutate occurs %d times in the original (expected once)" % (ident, text.count(old)))
            return 2
        path = os.path.join(work, ident + ".py")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text.replace(old, new))
        cells = []
        for p in profiles:
            consumer, kernel = p.split("/")
            report = os.path.join(work, "%s-%s-%s.json" % (ident, consumer, kernel))
            cmd = [args.seqpack, "conform", "--port", "%s '%s' '%s'" % (PYTHON, os.path.join(HERE, "seqpack_port.py"),
                                                                        path),
                   "--known-failures", os.path.join(HERE, "original.known_failures"), "--report", report,
                   "--cases", str(args.cases), "--jobs", "1", "--consumer", consumer, "--kernel", kernel]
            run = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
            if run.returncode not in (0, 1) or not os.path.isfile(report):
                print("%s under %s: conform exited %d\n%s" % (ident, p, run.returncode, run.stderr[-2000:]))
                return 2
            with open(report, encoding="utf-8") as f:
                got = worst(json.load(f))
            want = expected[PROFILES.index(p)]
            ok = got == want
            failures += 0 if ok else 1
            cells.append(got if ok else "%s (expected %s)" % (got, want))
        print("| %s | %s |" % (ident, " | ".join(cells)))
    for ident, _, _, _, why in MUTANTS:
        if not args.only or ident in args.only:
            print("- %s: %s" % (ident, why))
    print("consequence mutants: %s" % ("every severity as expected" if failures == 0 else
                                        "%d severities differ" % failures))
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
