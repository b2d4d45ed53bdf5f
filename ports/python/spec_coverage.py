#!/usr/bin/env python3
"""Spec coverage: which lines and branches of the original module the golden
vectors reach, through the Python adapter with every view it declares.

Usage:
  spec_coverage.py [--original FILE] [--vectors DIR] [--unreachable FILE] [--work DIR]

Sends every golden vector (conformance/vectors/*.jsonl: each case, and each
session as a session request) to ports/python/seqpack_port.py running the
original under Python's coverage (Debian's python3-coverage, branch
coverage), then reports, for the public operations and the helpers they call
(the scope of ports/python/mutate.py), every line and branch that no vector
reaches. Each one is either listed with its reason in the reviewed file
spec_unreachable.txt (`L<line> <reason>` or `B<from>-><to> <reason>`, `exit`
for a branch that leaves the function) or reported as a gap.

Prints the figure; writes DIR/spec_coverage.md (the list) and
DIR/coverage.json (coverage's own report). Exit 0 when every unreached line
and branch is listed and every listed one is still unreached; 1 otherwise;
77 (skipped) without the original, torch or coverage.
"""
import argparse
import ast
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import mutate  # noqa: E402

PYTHON = "/usr/bin/python3"


def read_reasons(path):
    out = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            key, _, reason = line.partition(" ")
            if not reason.strip() or key[0] not in "LB":
                raise SystemExit("%s:%d: expected `L<line> <reason>` or `B<from>-><to> <reason>`" % (path, n))
            out[key] = reason.strip()
    return out


def vectors_requests(vectors_dir):
    lines = [json.dumps({"type": "hello", "protocol": "seqpack-conformance/1", "encodings": ["runs"]})]
    count = {"case": 0, "session": 0}
    for name in sorted(os.listdir(vectors_dir)):
        if not name.endswith(".jsonl"):
            continue
        with open(os.path.join(vectors_dir, name), encoding="utf-8") as f:
            for line in f:
                if not line.strip():
                    continue
                v = json.loads(line)
                for kind in ("case", "session"):
                    if kind in v:
                        req = dict(v[kind])
                        req.pop("views", None)  # every view the adapter declares
                        lines.append(json.dumps(req))
                        count[kind] += 1
    return lines, count


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--original", default=os.path.join(ROOT, "..", "shared", "spec", "000_a9109b401b6808be.txt"),
                    help="the original module (SEQPACK_ORIGINAL in the environment wins)")
    ap.add_argument("--vectors", default=os.path.join(ROOT, "conformance", "vectors"))
    ap.add_argument("--unreachable", default=os.path.join(HERE, "spec_unreachable.txt"))
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "python-coverage"))
    args = ap.parse_args()
    args.original = os.environ.get("SEQPACK_ORIGINAL") or args.original
    if not os.path.isfile(args.original):
        print("skipped: the original module %s is absent (SEQPACK_ORIGINAL names it)" % args.original)
        return 77
    for module in ("torch", "coverage"):
        if subprocess.run([PYTHON, "-c", "import " + module], capture_output=True).returncode != 0:
            print("skipped: %s has no %s (Debian: python3-%s)" % (PYTHON, module, module))
            return 77

    os.makedirs(args.work, exist_ok=True)
    source = mutate.read_module(args.original)
    target = os.path.join(args.work, "original.py")  # the original, its first line blanked: the same line numbers
    with open(target, "w", encoding="utf-8") as f:
        f.write(source)
    requests, count = vectors_requests(args.vectors)
    data = os.path.join(args.work, ".coverage")
    if os.path.exists(data):
        os.remove(data)
    answers = subprocess.run([PYTHON, "-m", "coverage", "run", "--branch", "--data-file=" + data,
                              "--include=" + target, os.path.join(HERE, "seqpack_port.py"), target],
                             input="\n".join(requests) + "\n", capture_output=True, text=True)
    if answers.returncode != 0:
        sys.stderr.write(answers.stderr)
        print("the adapter failed under coverage")
        return 1
    replies = [json.loads(x) for x in answers.stdout.splitlines()]
    if len(replies) != len(requests):
        print("expected %d answers, got %d" % (len(requests), len(replies)))
        return 1
    report = os.path.join(args.work, "coverage.json")
    subprocess.run([PYTHON, "-m", "coverage", "json", "--data-file=" + data, "-o", report, "--include=" + target],
                   check=True, capture_output=True)
    with open(report, encoding="utf-8") as f:
        cov = json.load(f)["files"]
    cov = cov.get(target) or cov[next(k for k in cov if k.endswith("original.py"))]

    tree = ast.parse(source)
    spans = [(q, n.lineno, n.end_lineno) for q, n in mutate.scope(tree)]
    def_lines = {n.lineno for _, n in mutate.scope(tree)}

    def owner(line):
        for q, a, b in spans:
            if a <= line <= b:
                return q
        return None

    lines_text = source.split("\n")
    executed = set(cov["executed_lines"])
    missing = set(cov["missing_lines"])
    statements = {n for n in executed | missing if owner(n) and n not in def_lines}
    reached_lines = statements & executed
    branches = [tuple(b) for b in cov.get("executed_branches", []) + cov.get("missing_branches", [])]
    in_scope = [b for b in branches if owner(b[0]) and b[0] not in def_lines]
    missed_branches = sorted(tuple(b) for b in cov.get("missing_branches", []) if tuple(b) in set(in_scope))
    reasons = read_reasons(args.unreachable)

    def bkey(b):
        return "B%d->%s" % (b[0], "exit" if b[1] < 0 else b[1])

    gaps, listed, rows = [], set(), []
    for n in sorted(statements - executed):
        key = "L%d" % n
        listed.add(key)
        rows.append((key, owner(n), lines_text[n - 1].strip(), reasons.get(key)))
    for b in missed_branches:
        key = bkey(b)
        listed.add(key)
        rows.append((key, owner(b[0]), lines_text[b[0] - 1].strip(), reasons.get(key)))
    gaps = [r for r in rows if r[3] is None]
    stale = sorted(k for k in reasons if k not in listed)
    unreachable = len(rows) - len(gaps)
    total = len(statements) + len(in_scope)
    reached = len(reached_lines) + len(in_scope) - len(missed_branches)
    reachable = total - unreachable
    figure = ("spec coverage: %d of %d lines and %d of %d branches of the public operations reached by %d vectors "
              "and %d sessions (%.1f%%); %d unreachable (listed with reasons); %d of %d reachable (%.1f%%); "
              "%d gaps" % (len(reached_lines), len(statements), len(in_scope) - len(missed_branches), len(in_scope),
                           count["case"], count["session"], 100.0 * reached / total, unreachable, reached,
                           reachable, 100.0 * reached / reachable, len(gaps)))
    with open(os.path.join(args.work, "spec_coverage.md"), "w", encoding="utf-8") as f:
        f.write("# Spec coverage of the golden vectors\n\n%s.\n\n" % figure)
        f.write("| where | function | source | reason |\n|---|---|---|---|\n")
        for key, func, text, reason in rows:
            f.write("| %s | `%s` | `%s` | %s |\n" % (key, func, text.replace("|", "\\|")[:80],
                                                    reason or "**GAP: no vector reaches it**"))
    print(figure)
    for key, func, text, _ in gaps:
        print("GAP %s in %s: %s" % (key, func, text))
    for key in stale:
        print("STALE %s: listed as unreachable but reached (remove it from %s)" % (key, args.unreachable))
    print("list: %s" % os.path.join(args.work, "spec_coverage.md"))
    return 1 if gaps or stale else 0


if __name__ == "__main__":
    sys.exit(main())
