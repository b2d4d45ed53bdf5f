#!/usr/bin/env python3
"""The conformance suite's mutation proof on the original module.

Runs every mutant of ports/python/mutate.py through the Python adapter and
`seqpack conform` (the golden vectors and the default random budget, as
`seqpack conform` runs by default, with the original's known failures),
stopping each run at its first unexpected failure, and writes a Markdown
table: each mutant killed, survived, equivalent or unobservable, with the
case that killed it or the reason it cannot be killed.

Usage:
  mutation_score.py --seqpack BIN [--original FILE] [--seeds 1,2,3] [--jobs 2]
                    [--work DIR] [--equivalents FILE] [--only ID ...] [--conform-args "..."]

Before any mutant, the unmutated module (written back by mutate.py, as every
mutant is) must conform at every seed: otherwise the check cannot tell a
mutant from the original, and the script stops (exit 2).

A mutant killed by a golden vector is killed at every seed (the vectors are
replayed first, identically, whatever the seed), so only the first seed runs
it; the table says so. The reviewed list equivalent_mutants.txt names, with a
reason, each mutant that cannot be killed: `<id> equivalent: <reason>` (it
computes what the original computes wherever the API can be called) or
`<id> unobservable: <reason>` (it differs, but only where the protocol never
looks, e.g. a precondition no request can break). Those run at the first seed
only, to show that they survive; one that is killed does not belong there.

Groups per fault (issue 28): with --groups, every killed mutant (of the
first seed) also runs the whole default run, not stopped at its first
failure (shrinking and consequences off: they do not change the groups), and
the script reports how many failure groups each planted fault gave: the
distribution, its median and maximum (target: median 1, max 2), in its
output, mutation.md and mutation.json. --sample N scores every k-th mutant
only (N of them, in source order), for a quick figure.

Exit 0 when every unlisted mutant is killed at every seed, every listed one
survives, and every listed id names a mutant; else 1.
Results: DIR/mutation.md (the table) and DIR/mutation.json.
"""
import argparse
import collections
import concurrent.futures
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import mutate  # noqa: E402

PYTHON = "/usr/bin/python3"


def read_equivalents(path):
    out = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            ident, _, reason = line.partition(" ")
            kind, _, why = reason.strip().partition(":")
            if kind not in ("equivalent", "unobservable") or not why.strip():
                raise SystemExit("%s:%d: expected `<id> equivalent: <reason>` or `<id> unobservable: <reason>`"
                                 % (path, n))
            out[ident] = (kind, why.strip())
    return out


def kill(proc):
    """Ends the runner and the port it started (their own process group)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def conform(seqpack, module, seed, vectors, known, extra, timeout):
    """One `seqpack conform` run, stopped at its first FAIL line.
    Returns (verdict, detail, seconds): killed / survived / timeout."""
    port = "%s %s %s" % (PYTHON, shlex.quote(os.path.join(HERE, "seqpack_port.py")), shlex.quote(module))
    cmd = [seqpack, "conform", "--port", port, "--seed", str(seed), "--vectors", vectors, "--known-failures", known,
           "--shrink-budget", "0", "--jobs", "1"] + extra
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    timer = threading.Timer(timeout, lambda: kill(proc))
    timer.start()
    lines = []
    try:
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))
            if line.startswith("FAIL "):
                detail = line.strip()
                nxt = proc.stdout.readline().strip()
                if nxt.startswith("first difference:"):
                    detail += " " + nxt
                kill(proc)
                proc.wait()
                return "killed", detail, time.monotonic() - start
        rc = proc.wait()
    finally:
        timer.cancel()
    seconds = time.monotonic() - start
    if rc == 0:
        return "survived", "", seconds
    if rc < 0:
        return "timeout", "no verdict within %d s" % timeout, seconds
    tail = [x for x in lines if x.startswith(("NOW PASSES", "conform:"))] or lines[-2:]
    return "killed", " / ".join(tail)[:300], seconds


GROUPS = re.compile(r"unexpected failures in (\d+) groups")


def count_groups(seqpack, module, seed, vectors, known, extra, timeout):
    """The failure groups of one whole default run (None if it gave no summary)."""
    port = "%s %s %s" % (PYTHON, shlex.quote(os.path.join(HERE, "seqpack_port.py")), shlex.quote(module))
    cmd = [seqpack, "conform", "--port", port, "--seed", str(seed), "--vectors", vectors, "--known-failures", known,
           "--shrink-budget", "0", "--no-consequences", "--jobs", "1"] + extra
    try:
        out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout).stdout
    except subprocess.TimeoutExpired:
        return None
    found = GROUPS.findall(out)
    return int(found[-1]) if found else None


def record(results, by_vector, ident, seed, outcome):
    """Keeps one run's outcome; a kill by a golden vector (an id that is not
    the seed's random "p<seed>-"/"s<seed>-") holds at every seed."""
    results[ident][seed] = outcome
    verdict, detail = outcome[0], outcome[1]
    if verdict == "killed" and detail.startswith("FAIL ") and \
            not detail.split()[1].startswith(("p%d-" % seed, "s%d-" % seed)):
        by_vector.add(ident)


def pool_map(jobs, fn, items):
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        return list(pool.map(fn, items))


def md(text):
    return text.replace("|", "\\|").replace("\n", " ")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seqpack", required=True)
    ap.add_argument("--original", default=os.path.join(ROOT, "..", "shared", "spec", "000_a9109b401b6808be.txt"),
                    help="the original module (SEQPACK_ORIGINAL in the environment wins)")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "python-mutation"))
    ap.add_argument("--equivalents", default=os.path.join(HERE, "equivalent_mutants.txt"))
    ap.add_argument("--vectors", default=os.path.join(ROOT, "conformance", "vectors"))
    ap.add_argument("--known-failures", default=os.path.join(HERE, "original.known_failures"))
    ap.add_argument("--conform-args", default="", help="more options for seqpack conform, e.g. \"--cases 500\"")
    ap.add_argument("--timeout", type=int, default=1200, help="seconds per conform run")
    ap.add_argument("--only", nargs="+", default=None, help="run these mutant ids only")
    ap.add_argument("--groups", action="store_true",
                    help="also count each killed mutant's failure groups in a whole default run")
    ap.add_argument("--sample", type=int, default=0, help="score N mutants only, evenly spread (0: all)")
    ap.add_argument("--resume", action="store_true",
                    help="keep the verdicts DIR/runs.jsonl holds from an interrupted run (same module and suite)")
    args = ap.parse_args()
    args.original = os.environ.get("SEQPACK_ORIGINAL") or args.original

    if not os.path.isfile(args.original):
        print("skipped: the original module %s is absent (SEQPACK_ORIGINAL names it)" % args.original)
        return 77
    if subprocess.run([PYTHON, "-c", "import torch"], capture_output=True).returncode != 0:
        print("skipped: %s has no torch" % PYTHON)
        return 77
    seeds = [int(s) for s in args.seeds.split(",")]
    extra = shlex.split(args.conform_args)
    equivalents = read_equivalents(args.equivalents)
    mutants = mutate.mutants(mutate.read_module(args.original))
    ids = {m.id for m in mutants}
    stale = sorted(set(equivalents) - ids)
    if args.only is not None:
        unknown = set(args.only) - ids
        if unknown:
            print("no mutant named %s" % ", ".join(sorted(unknown)))
            return 2
        mutants = [m for m in mutants if m.id in set(args.only)]
    if args.sample > 0 and args.sample < len(mutants):
        scored_ids = [m for m in mutants if m.id not in equivalents]
        step = len(scored_ids) / args.sample
        keep = {scored_ids[int(k * step)].id for k in range(args.sample)}
        mutants = [m for m in mutants if m.id in keep]
    os.makedirs(os.path.join(args.work, "mutants"), exist_ok=True)
    # A copy of the runner, so that the build may change while this runs.
    shutil.copy2(args.seqpack, os.path.join(args.work, "seqpack"))
    args.seqpack = os.path.join(args.work, "seqpack")
    path_of = {}
    for m in mutants:
        path_of[m.id] = os.path.join(args.work, "mutants", m.id.replace(":", "_") + ".py")
        with open(path_of[m.id], "w", encoding="utf-8") as f:
            f.write(m.text)
    base = os.path.join(args.work, "mutants", "unmutated.py")
    with open(base, "w", encoding="utf-8") as f:
        f.write(mutate.unmutated(mutate.read_module(args.original)))

    run = lambda module, seed: conform(args.seqpack, module, seed, args.vectors, args.known_failures, extra,  # noqa
                                       args.timeout)
    started = time.monotonic()
    print("%d mutants (%d listed as equivalent or unobservable), seeds %s, %d jobs"
          % (len(mutants), len(equivalents), seeds, args.jobs))
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for seed, (verdict, detail, secs) in zip(seeds, pool.map(lambda s: run(base, s), seeds)):
            print("unmutated module, seed %d: %s in %.0f s %s" % (seed, verdict, secs, detail))
            if verdict != "survived":
                print("the unmutated module does not conform at seed %d: the check cannot tell mutants apart" % seed)
                return 2

        results = {m.id: {} for m in mutants}
        by_vector = set()
        done = [0]
        lock = threading.Lock()
        log_path = os.path.join(args.work, "runs.jsonl")
        if args.resume and os.path.exists(log_path):
            with open(log_path, encoding="utf-8") as f:
                for line in f:
                    r = json.loads(line)
                    if r["id"] in results and r["seed"] in seeds:
                        record(results, by_vector, r["id"], r["seed"], (r["verdict"], r["detail"], r["seconds"]))
        log = open(log_path, "a" if args.resume else "w", encoding="utf-8")

        def job(m, seed):
            verdict, detail, secs = run(path_of[m.id], seed)
            with lock:
                record(results, by_vector, m.id, seed, (verdict, detail, secs))
                log.write(json.dumps({"id": m.id, "seed": seed, "verdict": verdict, "detail": detail,
                                      "seconds": secs}) + "\n")
                log.flush()
                done[0] += 1
                if done[0] % 25 == 0:
                    print("  %d runs, %.0f s" % (done[0], time.monotonic() - started), flush=True)

        for i, seed in enumerate(seeds):
            todo = [m for m in mutants if seed not in results[m.id] and
                    (i == 0 or (m.id not in equivalents and m.id not in by_vector))]
            list(pool.map(lambda m: job(m, seed), todo))
        log.close()
    elapsed = time.monotonic() - started

    rows, problems = [], []
    killed = survived = equivalent = unobservable = 0
    kill_times = []
    for m in mutants:
        r = m.record()
        res = results[m.id]
        cells = []
        for seed in seeds:
            if seed in res:
                cells.append(res[seed][0])
            elif m.id in by_vector:
                cells.append("killed (vector)")
            else:
                cells.append("-")
        first = res[seeds[0]]
        if m.id in equivalents:
            status, note = equivalents[m.id]
            if first[0] != "survived":
                problems.append("%s is listed as %s but was %s: %s" % (m.id, status, first[0], first[1]))
                status = "LISTED BUT " + first[0].upper()
            elif status == "equivalent":
                equivalent += 1
            else:
                unobservable += 1
        elif all(res.get(s, ("killed",))[0] == "killed" for s in seeds):
            status, note = "killed", first[1]
            killed += 1
            kill_times.append(first[2])
        else:
            status = "SURVIVED"
            note = "; ".join("seed %d: %s %s" % (s, res[s][0], res[s][1]) for s in seeds
                             if s in res and res[s][0] != "killed")
            survived += 1
            problems.append("%s (%s line %d, %s: %s) %s" % (m.id, r["function"], r["line"], r["operator"], r["change"],
                                                            note))
        rows.append((m, r, cells, status, note))
    for ident in stale:
        problems.append("%s is listed in %s but names no mutant (remove it)" % (ident, args.equivalents))

    scored = killed + survived
    kill_times.sort()
    groups, group_line = {}, ""
    if args.groups:
        killed_ids = [m.id for m, r, cells, status, note in rows if status == "killed"]
        counts = list(pool_map(args.jobs, lambda i: count_groups(args.seqpack, path_of[i], seeds[0], args.vectors,
                                                                 args.known_failures, extra, args.timeout),
                               killed_ids))
        groups = dict(zip(killed_ids, counts))
        known_counts = sorted(c for c in counts if c is not None)
        if known_counts:
            histogram = collections.Counter(known_counts)
            group_line = ("failure groups per killed mutant (whole default run, seed %d, %d mutants): median %d, "
                          "max %d; %s" % (seeds[0], len(known_counts), known_counts[len(known_counts) // 2],
                                          known_counts[-1], ", ".join("%d group%s: %d" % (g, "" if g == 1 else "s",
                                                                                          n)
                                                                      for g, n in sorted(histogram.items()))))
        for i, c in groups.items():
            if c is None:
                problems.append("%s: its whole run gave no summary (timeout?)" % i)
    with open(os.path.join(args.work, "mutation.md"), "w", encoding="utf-8") as f:
        f.write("# Mutation proof: the original module through the adapter and `seqpack conform`\n\n")
        f.write("%d mutants: %d killed, %d survived, %d equivalent, %d unobservable by the protocol (listed with "
                "reasons); score %d/%d of the others killed at seeds %s. %.0f s with %d jobs.\n\n"
                % (len(mutants), killed, survived, equivalent, unobservable, killed, scored,
                   ", ".join(map(str, seeds)), elapsed, args.jobs))
        if group_line:
            f.write(group_line + ".\n\n")
        if kill_times:
            f.write("Time to the first verdict of a killed mutant (first seed): median %.1f s, max %.1f s.\n\n"
                    % (kill_times[len(kill_times) // 2], kill_times[-1]))
        f.write("| mutant | line | operator | change | %s | status | killed by / reason |\n" %
                " | ".join("seed %d" % s for s in seeds))
        f.write("|---|---|---|---|%s---|---|\n" % ("---|" * len(seeds)))
        for m, r, cells, status, note in rows:
            f.write("| `%s` | %d | %s | %s | %s | %s | %s |\n" % (m.id, r["line"], r["operator"], md(r["change"]),
                                                                 " | ".join(cells), status, md(note)[:240]))
    with open(os.path.join(args.work, "mutation.json"), "w", encoding="utf-8") as f:
        json.dump({"mutants": len(mutants), "killed": killed, "survived": survived, "equivalent": equivalent,
                   "unobservable": unobservable,
                   "seeds": seeds, "seconds": elapsed, "problems": problems, "groups": groups,
                   "results": {m.id: {"record": r, "status": status, "note": note,
                                      "runs": {str(s): results[m.id][s] for s in results[m.id]}}
                               for m, r, cells, status, note in rows}}, f, indent=1)
    print("mutation score: %d/%d mutants killed at seeds %s (%d more equivalent, %d unobservable by the protocol); "
          "%.0f s" % (killed, scored, ",".join(map(str, seeds)), equivalent, unobservable, elapsed))
    if group_line:
        print(group_line)
    print("table: %s" % os.path.join(args.work, "mutation.md"))
    for p in problems:
        print("PROBLEM: " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
