#!/usr/bin/env python3
"""Throughput of in-process checking against the subprocess runner, in one run.

Usage: bench_assert_conforms.py --seqpack BUILD/cli/seqpack [--original FILE] [--cases N] [--seed S]
(PYTHONPATH must reach the seqpack package: BUILD/python, or an install's site-packages.)

Three figures on the original module, each in cases per second, and their
ratios to the first:
  subprocess   `seqpack conform --port "python3 seqpack_port.py ORIGINAL" --profile packer --cases N --jobs 1`
               (the C++ runner with one port, as in-process checking has one interpreter: generation,
               the oracle and the port pipelined; its own figure)
  in-process   seqpack.testing.assert_conforms under Hypothesis @given on strategies.cases("packer"),
               N examples, generation included (how a pytest user runs it)
  in-process, cases only   assert_conforms on N cases drawn beforehand (no Hypothesis in the loop)
and, on the very same cases, the golden vectors (conformance/vectors; the runner replays them with
--cases 0, in-process check() runs each vector's case, its session vectors excepted):
  subprocess, vectors   and   in-process, vectors
Both sides check the same views (everything the original declares; sessions are the runner's only,
one random case in 16). Prints a table; --json writes the figures.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seqpack", required=True)
    ap.add_argument("--original", default=os.environ.get("SEQPACK_ORIGINAL") or
                    os.path.join(ROOT, "..", "shared", "spec", "000_a9109b401b6808be.txt"))
    ap.add_argument("--cases", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json")
    args = ap.parse_args()

    from hypothesis import HealthCheck, given, settings
    from seqpack import strategies
    import seqpack
    from seqpack.testing import assert_conforms, check, load_module

    known = os.path.join(ROOT, "ports", "python", "original.known_failures")
    port = "%s %s %s" % (sys.executable, os.path.join(ROOT, "ports", "python", "seqpack_port.py"), args.original)
    vectors = os.path.join(ROOT, "conformance", "vectors")

    def conform(*extra):
        with tempfile.TemporaryDirectory(prefix="pymodule-bench-") as tmp:
            report = os.path.join(tmp, "report.json")
            run = subprocess.run([args.seqpack, "conform", "--port", port, "--profile", "packer", "--seed",
                                  str(args.seed), "--known-failures", known, "--report", report, "--jobs", "1"] + list(extra),
                                 capture_output=True, text=True)
            if run.returncode != 0:
                sys.exit("the subprocess runner failed:\n" + run.stdout + run.stderr)
            with open(report, encoding="utf-8") as f:
                return json.load(f)

    t0 = time.perf_counter()
    r = conform("--no-vectors", "--cases", str(args.cases))
    wall = time.perf_counter() - t0
    sub = r["cases_per_second"]
    rv = conform("--vectors", vectors, "--cases", "0")

    mod = load_module(args.original)
    drawn = []
    timing = {}

    @settings(max_examples=args.cases, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(case=strategies.cases("packer"))
    def under_given(case):
        drawn.append(case)
        assert_conforms(mod, case)

    t0 = time.perf_counter()
    under_given()
    timing["given"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    for case in drawn:
        assert_conforms(mod, case)
    timing["cases"] = time.perf_counter() - t0
    given_rate = len(drawn) / timing["given"]
    cases_rate = len(drawn) / timing["cases"]
    golden = []
    with open(os.path.join(vectors, "vectors.jsonl"), encoding="utf-8") as f:
        for line in f:
            v = json.loads(line)
            if "case" in v:
                golden.append((v["case"]["id"], seqpack.Case.from_json(json.dumps(v["case"]))))
    t0 = time.perf_counter()
    for ident, case in golden:
        check(mod, case, ident)
    vec_rate = len(golden) / (time.perf_counter() - t0)
    rows = [("subprocess runner (seqpack conform, packer)", r["cases"], sub, 1.0),
            ("in-process assert_conforms under @given", len(drawn), given_rate, given_rate / sub),
            ("in-process assert_conforms, cases drawn beforehand", len(drawn), cases_rate, cases_rate / sub),
            ("subprocess runner, golden vectors", rv["cases"], rv["cases_per_second"], 1.0),
            ("in-process check, golden vectors (not sessions)", len(golden), vec_rate,
             vec_rate / rv["cases_per_second"])]
    print("%-52s %7s %9s %7s" % ("", "cases", "cases/s", "ratio"))  # ratio: to the subprocess row above
    for name, n, rate, ratio in rows:
        print("%-52s %7d %9.1f %7.2f" % (name, n, rate, ratio))
    print("(subprocess wall time %.1f s for %d cases; tokens per case, in-process: mean %.0f)"
          % (wall, r["cases"], sum(sum(c.layout.sample_lens) for c in drawn) / max(1, len(drawn))))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"subprocess": sub, "given": given_rate, "cases": cases_rate, "n": len(drawn),
                       "subprocess_vectors": rv["cases_per_second"], "vectors": vec_rate}, f)


if __name__ == "__main__":
    main()
