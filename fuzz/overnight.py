#!/usr/bin/env python3
"""The overnight fuzzing job (fuzz/README.md). Called by fuzz/overnight.sh,
which builds the presets first.

For each target, in turn: libFuzzer in fork mode for --time seconds with
--jobs workers (default: every core), carrying on after crashes, timeouts and
OOMs, in rounds of --round seconds that alternate the sanitizer build (ASan +
UBSan, preset fuzz) and the fast build (no sanitizer, preset fuzz-fast: logic
bugs, that is the properties' own aborts, at several times the speed) on one
shared work corpus; new coverage
merged back into corpus/<target>/ (minimised, named by SHA-1); every crash
reproduced, minimised and grouped by what failed (the "seqpack-fuzz: ..."
line: the failing property or first differing field; else the sanitizer's
summary), not by stack; then source-based coverage of the reference and the
GPU host backend over the corpora (llvm-cov HTML), and a report in Markdown
and JSON. State lives in --state; a run that stops half way resumes with the
targets it had not finished (--resume), and the work corpora carry over from
night to night.
"""
import argparse
import datetime
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGETS = ["build_pack", "differential", "protocol", "context_parallel", "large_pack", "port_answer"]


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace", **kw)


# Symbolised sanitizer reports (the signatures name functions).
if shutil.which("llvm-symbolizer-14"):
    os.environ.setdefault("ASAN_SYMBOLIZER_PATH", shutil.which("llvm-symbolizer-14"))
os.environ.setdefault("UBSAN_OPTIONS", "print_stacktrace=1")


def fuzzer(build, target):
    return os.path.join(build, "fuzz", f"fuzz_{target}")


def options(target):
    """The target's libFuzzer flags from fuzz/options/<target>.options (max_len,
    timeout, rss limit, dictionary), as ClusterFuzzLite, ci.sh and measure.sh
    read them."""
    path = os.path.join(ROOT, "fuzz", "options", f"{target}.options")
    flags = {}
    with open(path) as f:
        for line in f:
            key, _, value = (x.strip() for x in line.partition("="))
            if key in ("max_len", "timeout", "rss_limit_mb"):
                flags[key] = f"-{key}={value}"
            elif key == "dict":
                flags[key] = f"-dict={os.path.join(ROOT, 'fuzz', 'dict', value)}"
    missing = {"max_len", "timeout", "rss_limit_mb", "dict"} - set(flags)
    if missing:
        raise SystemExit(f"overnight: {path} lacks {', '.join(sorted(missing))}")
    return flags


def signature(output):
    """What failed, for grouping: our own abort line, else the sanitizer's summary."""
    m = re.search(r"seqpack-fuzz: (.*)", output)
    if m:
        what = m.group(1).strip()
        # A property violation: the property's name is the group, not its message.
        p = re.match(r"property ([\w.]+):", what)
        return "property " + p.group(1) if p else re.sub(r"\d+", "N", what)
    m = re.search(r"SUMMARY: (\w+): ([\w-]+)", output)
    if m:
        # The first stack frame in the project's own code names the place.
        for frame in re.finditer(r"#\d+ 0x[0-9a-f]+ in (.+?) (/\S+):\d+", output):
            if frame.group(2).startswith(ROOT) and "/fuzz/" not in frame.group(2):
                return f"{m.group(1)} {m.group(2)} in {frame.group(1)}"
        return f"{m.group(1)} {m.group(2)}"
    if "ERROR: libFuzzer: timeout" in output:
        return "timeout"
    if "out-of-memory" in output:
        return "out of memory"
    return "unclassified crash"


def builds(args, target):
    """The builds to alternate: the sanitizer build, then the fast one if it has this target."""
    out = [("sanitizers", args.fuzz_build)]
    if args.fast_build and os.path.exists(fuzzer(args.fast_build, target)):
        out.append(("fast", args.fast_build))
    return out


def fuzz_target(args, target, state, log):
    work = os.path.join(state, target, "corpus")
    crashes = os.path.join(state, target, "crashes")
    os.makedirs(work, exist_ok=True)
    os.makedirs(crashes, exist_ok=True)
    corpus = os.path.join(ROOT, "corpus", target)
    before = len(os.listdir(corpus))
    flags = options(target)
    alternation = builds(args, target)
    per_build = {name: {"seconds": 0.0, "executions": 0, "edges": 0, "features": 0, "rounds": 0}
                 for name, _ in alternation}
    left = args.time
    rounds = 0
    while left > 0:
        name, build = alternation[rounds % len(alternation)]
        seconds = min(args.round, left)
        cmd = [fuzzer(build, target), work, corpus, f"-fork={args.jobs}", "-ignore_crashes=1",
               "-ignore_timeouts=1", "-ignore_ooms=1", f"-max_total_time={seconds}", *flags.values(),
               f"-artifact_prefix={crashes}/", "-print_final_stats=1"]
        log.write(f"$ {' '.join(cmd)}\n")
        start = time.time()
        out = run(cmd, timeout=seconds + 300).stdout
        elapsed = time.time() - start
        with open(os.path.join(state, target, f"fuzz-{rounds}-{name}.log"), "w") as f:
            f.write(out)
        # fork mode prints "#N: cov: C ft: F corp: K exec/s: E ..." lines; the last one is the round's total.
        stats = re.findall(r"#(\d+): cov: (\d+) ft: (\d+) corp: (\d+) exec/s:? (\d+)", out)
        execs, cov, ft, _, _ = (int(x) for x in stats[-1]) if stats else (0, 0, 0, 0, 0)
        b = per_build[name]
        b["seconds"] += elapsed
        b["executions"] += execs
        b["edges"] = max(b["edges"], cov)  # the most any round of this build reached
        b["features"] = max(b["features"], ft)
        b["rounds"] += 1
        left -= seconds
        rounds += 1
    # New coverage back into the committed corpus, minimised (libFuzzer keeps
    # only inputs that add coverage and names them by SHA-1).
    merge = run([fuzzer(args.fuzz_build, target), "-merge=1", flags["max_len"], flags["timeout"],
                 flags["rss_limit_mb"], corpus, work])
    log.write(merge.stdout[-2000:])
    after = len(os.listdir(corpus))
    total_s = sum(b["seconds"] for b in per_build.values())
    for b in per_build.values():
        b["exec_per_sec"] = round(b["executions"] / b["seconds"]) if b["seconds"] else 0  # all jobs together
        b["seconds"] = round(b["seconds"])
    return {"target": target, "seconds": round(total_s), "jobs": args.jobs, "rounds": rounds,
            "executions": sum(b["executions"] for b in per_build.values()),
            "exec_per_sec": round(sum(b["executions"] for b in per_build.values()) / total_s) if total_s else 0,
            "edges": per_build["sanitizers"]["edges"], "builds": per_build,
            "corpus_before": before, "corpus_after": after, "new_corpus_entries": after - before}


def triage(args, target, state, findings):
    """Reproduces this target's new crash artifacts, groups them by what failed,
    and minimises the smallest input of each group (keeping its failure)."""
    crashes = os.path.join(state, target, "crashes")
    done = os.path.join(state, target, "triaged")
    flags = options(target)
    os.makedirs(done, exist_ok=True)
    groups = {}
    for path in sorted(glob.glob(os.path.join(crashes, "*")), key=os.path.getsize):
        out = run([fuzzer(args.fuzz_build, target), path, "-runs=1", flags["timeout"], flags["rss_limit_mb"]],
                  timeout=120).stdout
        groups.setdefault(signature(out), []).append((path, out))
    for sig, items in groups.items():
        key = hashlib.sha1(f"{target}|{sig}".encode()).hexdigest()[:12]
        fdir = os.path.join(state, "findings", key)
        os.makedirs(fdir, exist_ok=True)
        minimal = os.path.join(fdir, "input")
        path, out = items[0]  # the smallest
        tmp = os.path.join(fdir, "candidate")
        run([fuzzer(args.fuzz_build, target), path, "-minimize_crash=1", f"-max_total_time={args.minimize_time}",
             flags["timeout"], flags["rss_limit_mb"], f"-exact_artifact_path={tmp}"], timeout=args.minimize_time + 120)
        candidate = path
        if os.path.exists(tmp):
            again = run([fuzzer(args.fuzz_build, target), tmp, "-runs=1", flags["timeout"], flags["rss_limit_mb"]],
                        timeout=120).stdout
            if signature(again) == sig:
                candidate, out = tmp, again
        if not os.path.exists(minimal) or os.path.getsize(candidate) < os.path.getsize(minimal):
            shutil.copyfile(candidate, minimal)
            with open(os.path.join(fdir, "output.txt"), "w") as f:
                f.write(out[-20000:])
        if os.path.exists(tmp):
            os.remove(tmp)
        entry = findings.setdefault(key, {"target": target, "signature": sig, "count": 0, "first_seen": now(),
                                          "input": shown(minimal)})
        entry["count"] += len(items)
        entry["last_seen"] = now()
        entry["reproduce"] = f"build/default/fuzz/fuzz_{target} {entry['input']}"
        for p, _ in items:
            os.replace(p, os.path.join(done, os.path.basename(p)))


def coverage(args, state):
    """Line coverage of reference/ and gpu/ over the committed corpora, with HTML."""
    prof = os.path.join(state, "coverage")
    shutil.rmtree(prof, ignore_errors=True)
    os.makedirs(prof)
    bins = []
    for target in args.targets:
        b = fuzzer(args.coverage_build, target)
        bins.append(b)
        env = dict(os.environ, LLVM_PROFILE_FILE=os.path.join(prof, f"{target}-%p.profraw"))
        subprocess.run([b, os.path.join(ROOT, "corpus", target)], env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=1800)
    data = os.path.join(prof, "all.profdata")
    subprocess.run(["llvm-profdata-14", "merge", "-sparse", *glob.glob(os.path.join(prof, "*.profraw")), "-o", data],
                   check=True)
    objects = [bins[0]] + [x for b in bins[1:] for x in ("-object", b)]
    sources = [os.path.join(ROOT, "reference", "src"), os.path.join(ROOT, "gpu", "src")]
    report = run(["llvm-cov-14", "report", *objects, f"-instr-profile={data}", *sources]).stdout
    run(["llvm-cov-14", "show", *objects, f"-instr-profile={data}", "-format=html",
         f"-output-dir={os.path.join(state, 'coverage-html')}", *sources])
    result = {"html": shown(os.path.join(state, "coverage-html", "index.html")), "files": {}}
    for line in report.splitlines():
        cols = line.split()
        # (llvm-cov drops the sources' common prefix: with one target, a name may be "pack.cpp")
        if len(cols) >= 10 and (cols[0].endswith((".cpp", ".cu")) or cols[0] == "TOTAL"):
            # Filename Regions Missed Cover Functions Missed Executed Lines Missed Cover ...
            name = os.path.relpath(cols[0], ROOT) if cols[0].startswith(ROOT) else cols[0]
            result["files"][name] = {"lines": int(cols[7]), "missed_lines": int(cols[8]), "line_cover": cols[9],
                                     "region_cover": cols[3]}
    return result


def shown(path):
    """A path relative to the project when it lies inside it."""
    rel = os.path.relpath(path, ROOT)
    return path if rel.startswith("..") else rel


def now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def write_report(state, run_info, results, findings, cov):
    report = {"run": run_info, "targets": results, "findings": list(findings.values()), "coverage": cov}
    with open(os.path.join(state, "report.json"), "w") as f:
        json.dump(report, f, indent=2)
    lines = [f"# seqpack overnight fuzzing report", "",
             f"Run {run_info['id']}: {run_info['started']} to {run_info['finished']}, {run_info['time']} s per target, "
             f"{run_info['jobs']} jobs (libFuzzer fork mode), rounds of {run_info['round']} s alternating the "
             f"sanitizer build and the fast build where it was built, state in `{shown(state)}`.", "",
             "exec/s counts every job together. Features are fork mode's `cov` (libFuzzer counts features there: "
             "edges and their hit-count buckets), the most any round of that build reached; the two builds "
             "instrument different code, so their figures are not comparable. `-` where the build ran no round.",
             "",
             "| target | seconds | exec/s with sanitizers | exec/s fast | features with sanitizers | features fast "
             "| new corpus entries | corpus after | findings |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in results:
        san = r.get("builds", {}).get("sanitizers", {})
        fast = r.get("builds", {}).get("fast", {})
        if not fast.get("rounds"):
            fast = {}
        count = sum(1 for f in findings.values() if f["target"] == r["target"])
        lines.append(f"| {r['target']} | {r['seconds']} | {san.get('exec_per_sec', r['exec_per_sec'])} | "
                     f"{fast.get('exec_per_sec', '-')} | {san.get('edges', r['edges'])} | {fast.get('edges', '-')} | "
                     f"{r.get('new_corpus_entries', r['corpus_after'] - r['corpus_before'])} | {r['corpus_after']} | "
                     f"{count} |")
    lines += ["", "## Findings", ""]
    if not findings:
        lines.append("None: no crash, violation, mismatch, timeout or OOM in any target.")
    for f in findings.values():
        lines += [f"- **{f['target']}: {f['signature']}** (seen {f['count']} times; first {f['first_seen']})",
                  f"  - minimised input: `{f['input']}`", f"  - reproduce: `{f['reproduce']}`",
                  "  - once fixed, copy the input into `corpus/" + f["target"] + "/` (named by its SHA-1) so that "
                  "the corpus replay keeps it"]
    lines += ["", "## Coverage of the reference and the GPU host backend over the corpora", "",
              f"HTML: `{cov.get('html', '-')}`", "", "| file | lines | line coverage | region coverage |",
              "| --- | --- | --- | --- |"]
    for name, c in cov.get("files", {}).items():
        lines.append(f"| {name} | {c['lines']} | {c['line_cover']} | {c['region_cover']} |")
    with open(os.path.join(state, "report.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--time", type=int, default=3600, help="seconds per target (default 3600)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                    help="libFuzzer fork-mode workers (default: every core of this machine)")
    ap.add_argument("--round", type=int, default=900,
                    help="seconds of one round; rounds alternate the sanitizer and fast builds (default 900)")
    ap.add_argument("--state", default=os.path.join(ROOT, "build", "fuzz-overnight"))
    ap.add_argument("--targets", nargs="*", default=TARGETS)
    ap.add_argument("--resume", action="store_true", help="finish the targets the last run did not")
    ap.add_argument("--minimize-time", type=int, default=60, help="seconds to minimise each new finding")
    ap.add_argument("--fuzz-build", default=os.path.join(ROOT, "build", "fuzz"))
    ap.add_argument("--fast-build", default=os.path.join(ROOT, "build", "fuzz-fast"),
                    help="the build without sanitizers (preset fuzz-fast); '' to use the sanitizer build only")
    ap.add_argument("--coverage-build", default=os.path.join(ROOT, "build", "coverage"))
    args = ap.parse_args()
    if args.time < 1 or args.round < 1 or args.jobs < 1:
        ap.error("--time, --round and --jobs must be at least 1")
    state = os.path.abspath(args.state)
    os.makedirs(state, exist_ok=True)
    progress_path = os.path.join(state, "progress.json")
    progress = json.load(open(progress_path)) if os.path.exists(progress_path) else {}
    if not (args.resume and progress.get("pending")):
        progress = {"id": now(), "started": now(), "pending": list(args.targets), "results": []}
    findings_path = os.path.join(state, "findings.json")
    findings = json.load(open(findings_path)) if os.path.exists(findings_path) else {}
    with open(os.path.join(state, "overnight.log"), "a") as log:
        while progress["pending"]:
            target = progress["pending"][0]
            print(f"overnight: fuzzing {target} for {args.time} s with {args.jobs} jobs", flush=True)
            result = fuzz_target(args, target, state, log)
            triage(args, target, state, findings)
            with open(findings_path, "w") as f:
                json.dump(findings, f, indent=2)
            progress["results"].append(result)
            progress["pending"].pop(0)
            with open(progress_path, "w") as f:
                json.dump(progress, f, indent=2)
    print("overnight: coverage", flush=True)
    cov = coverage(args, state)
    info = {"id": progress["id"], "started": progress["started"], "finished": now(), "time": args.time,
            "jobs": args.jobs, "round": args.round}
    write_report(state, info, progress["results"], findings, cov)
    with open(os.path.join(state, "runs.jsonl"), "a") as f:
        f.write(json.dumps({"run": info, "targets": progress["results"], "findings": len(findings)}) + "\n")
    print(f"overnight: report in {os.path.join(state, 'report.md')} and report.json", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
