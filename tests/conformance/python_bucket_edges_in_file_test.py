#!/usr/bin/env python3
"""The golden vector file alone convicts the CUDA-graph bucket's tier faults.

Usage: python_bucket_edges_in_file_test.py ORIGINAL VECTORS_JSONL WORKDIR [--all]
       (SEQPACK_ORIGINAL in the environment wins over ORIGINAL)

Reads VECTORS_JSONL as a port's own test suite would (no `seqpack` process:
conformance/vectors/README.md, "Using the vectors without a process"), so
neither the runner's edge cases by rule nor random cases take part. Checks:

1. the `edge-bucket-*` vectors hold what their ids say and follow their rule
   (README's family table): at each tier boundary 2048, 4096, 8192, 16384
   cp 1, 2 and 3, a stream alone and one with the pad segment's row, and on
   each stream an odd part (7, 17 or more) that a `n < E` test shows at; over
   the family the odd parts 1, 3, 5, 7, 17 and 127;
2. the unmutated original (through ports/python/seqpack_port.py) answers each
   of them as the file expects;
3. each mutant of ports/python/mutate.py that writes a tier test `n <= E` as
   `n < E` answers at least one vector at its own edge otherwise.

With --all every case vector of the file is sent (sessions skipped) and the
differing ids are printed for each mutant, vectors the unmutated original
also fails (its known failures) left out: the before/after figure of issue 28.
Exits 77 (skipped) without torch.
"""
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
ADAPTER = os.path.join(ROOT, "ports", "python", "seqpack_port.py")
MUTATE = os.path.join(ROOT, "ports", "python", "mutate.py")
EDGES = (2048, 4096, 8192, 16384)
ODD_PARTS = {1, 3, 5, 7, 17, 127}


def odd_part(n):
    while n % 2 == 0:
        n //= 2
    return n


def answers(module, cases):
    """The adapter's results for `cases` (views off), by id."""
    proc = subprocess.Popen([sys.executable, ADAPTER, module], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)
    lines = [json.dumps({"type": "hello", "protocol": "seqpack-conformance/1"})]
    lines += [json.dumps(dict(c, views=[])) for c in cases]
    out, _ = proc.communicate("\n".join(lines) + "\n", timeout=600)
    replies = [json.loads(line) for line in out.splitlines() if line.strip()]
    if proc.returncode != 0 or len(replies) != len(cases) + 1:
        raise SystemExit("FAIL: the adapter on %s answered %d of %d lines (rc %d)" %
                         (module, len(replies), len(cases) + 1, proc.returncode))
    return {r.get("id"): r for r in replies[1:]}


def differs(got, expect):
    if got.get("ok") != expect["ok"]:
        return "ok"
    if not expect["ok"]:
        return "error" if got.get("error") != expect["error"] else None
    for key in ("pack", "graph_bounds"):
        if got.get(key) != expect[key]:
            return key
    return None


def check_rule(vectors):
    """The edge-bucket family's rule, read off the cases themselves."""
    seen = set()
    for v in vectors:
        case = v["case"]
        m = re.fullmatch(r"edge-bucket-(\d+)-cp(\d)-(causal|full)-odd(\d+)(-alone)?", case["id"])
        if not m:
            raise SystemExit("FAIL: %s is not an edge-bucket id" % case["id"])
        edge, cp, stream, odd, alone = int(m.group(1)), int(m.group(2)), m.group(3), int(m.group(4)), bool(m.group(5))
        o = case["options"]
        lay = case["layout"]
        rows = {s: sum(n for n, mode in zip(lay["split_lens"], lay["attn_modes"]) if mode == s)
                for s in ("causal", "full")}
        other = "full" if stream == "causal" else "causal"
        # The bucket's argument is E: the rows alone, or the rows and the pad segment's row.
        want = (edge, 0) if alone else (edge - 1, 1)
        if (o["cp_world_size"], odd_part(o[stream + "_seq_alignment"]), o[other + "_seq_alignment"]) != (
                cp, odd, 1) or not o["pad_for_cuda_graphs"] or (rows[stream], rows[other]) != want:
            raise SystemExit("FAIL: %s does not hold what its id says" % case["id"])
        seen.add((edge, cp, stream, odd, alone))
    for edge in EDGES:
        here = {s for s in seen if s[0] == edge}
        if {s[1] for s in here} != {1, 2, 3} or {s[4] for s in here} != {True, False}:
            raise SystemExit("FAIL: edge %d lacks a cp or a layout: %s" % (edge, sorted(here)))
        for stream in ("causal", "full"):
            if not {s[3] for s in here if s[2] == stream} & {7, 17, 127}:
                raise SystemExit("FAIL: edge %d: no %s stream has an odd part of 7 or 17 and more" % (edge, stream))
    if {s[3] for s in seen} != ODD_PARTS or {s[2] for s in seen if s[4]} != {"causal", "full"}:
        raise SystemExit("FAIL: the family lacks an odd part or a stream alone: %s" % sorted(seen))
    print("rule: %d edge-bucket vectors: every edge with cp 1-3, both layouts and a convicting odd part on each "
          "stream; odd parts 1, 3, 5, 7, 17, 127" % len(vectors))


def main():
    args = [a for a in sys.argv[1:] if a != "--all"]
    every = "--all" in sys.argv[1:]
    if len(args) != 3:
        sys.stderr.write(__doc__)
        return 2
    original, vectors_file, work = args
    original = os.environ.get("SEQPACK_ORIGINAL") or original
    try:
        import torch  # noqa: F401  (the adapter's dependency)
    except ImportError:
        print("skipped: torch is not importable by %s" % sys.executable)
        return 77
    if not os.path.isfile(original):
        print("skipped: the original module %s is absent (SEQPACK_ORIGINAL names it)" % original)
        return 77
    vectors = []
    with open(vectors_file, encoding="utf-8") as f:
        for line in f:
            v = json.loads(line)
            if "case" in v:
                vectors.append(v)
    edge_vectors = [v for v in vectors if v["case"]["id"].startswith("edge-bucket-")]
    if not every:
        check_rule(edge_vectors)
    chosen = vectors if every else edge_vectors
    if not chosen:
        raise SystemExit("FAIL: no vector to send")

    # The mutants `n <= E` -> `n < E`, found by their change (ids stay stable
    # while the original does not change; the text is what this test is about).
    listing = subprocess.run([sys.executable, MUTATE, "list", original], check=True, capture_output=True,
                             text=True).stdout
    mutants = {}
    for line in listing.splitlines():
        fields = line.split("\t")
        for edge in EDGES:
            if fields[0].startswith("_get_padded_size:cmp-boundary:") and fields[3] == (
                    "`<=` -> `<` in `n <= %d`" % edge):
                mutants[edge] = fields[0]
    if sorted(mutants) != list(EDGES):
        raise SystemExit("FAIL: mutate.py lists no `n < E` mutant for edges %s" % sorted(set(EDGES) - set(mutants)))
    os.makedirs(work, exist_ok=True)
    subprocess.run([sys.executable, MUTATE, "write", original, work] + list(mutants.values()), check=True)

    cases = [v["case"] for v in chosen]
    expect = {v["case"]["id"]: v["expect"] for v in chosen}
    base = answers(os.path.join(work, "unmutated.py"), cases)
    base_fail = {i for i in expect if differs(base[i], expect[i])}
    if not every and base_fail:
        raise SystemExit("FAIL: the unmutated original differs on %s" % sorted(base_fail))
    print("unmutated original: %d of %d vectors as expected" % (len(cases) - len(base_fail), len(cases)))
    failed = False
    for edge, mid in sorted(mutants.items()):
        got = answers(os.path.join(work, mid.replace(":", "_") + ".py"), cases)
        convicting = sorted(i for i in expect if i not in base_fail and differs(got[i], expect[i]))
        own = [i for i in convicting if i.startswith("edge-bucket-%d-" % edge)]
        print("%s (n < %d): convicted by %d vectors%s" % (mid, edge, len(convicting),
                                                          ": " + " ".join(convicting) if convicting else ""))
        if not every and not own:
            print("FAIL: no edge-bucket-%d vector convicts %s" % (edge, mid))
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
