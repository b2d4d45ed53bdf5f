#!/usr/bin/env python3
"""Checks the ClusterFuzzLite setup: .github/workflows/*.yml and .clusterfuzzlite/.

  scripts/check_workflows.py ROOT          # the tree: exit 0, or 1 with each problem
  scripts/check_workflows.py --plant ROOT  # planted breaks, in a copy: each must fail

Each workflow file must parse as YAML and use only the actions and inputs that
ClusterFuzzLite documents (google/clusterfuzzlite, actions/build_fuzzers/action.yml
and actions/run_fuzzers/action.yml at commit 40f9a53, the v1 actions that
docs/running-clusterfuzzlite/github_actions.md uses). Beyond the names:
run_fuzzers' required github-token is given; mode and sanitizer take documented
values; a matrix of sanitizers uses only those .clusterfuzzlite/project.yaml
lists; coverage mode runs on a coverage build; every run names its corpus
storage (storage-repo, storage-repo-branch, storage-repo-branch-coverage); the
four modes are all there (code-change on pull_request with address and
undefined and fuzz-seconds 600, batch on a schedule, prune, coverage); and
project.yaml's base_os_version matches the Dockerfile's FROM tag (as
google/oss-fuzz's infra/ci/check_base_os.py requires).
"""
import pathlib
import re
import shutil
import sys
import tempfile

import yaml

ACTIONS = {
    "google/clusterfuzzlite/actions/build_fuzzers@v1": {
        "language", "dry-run", "allowed-broken-targets-percentage", "sanitizer",
        "project-src-path", "bad-build-check", "keep-unaffected-fuzz-targets",
        "storage-repo", "storage-repo-branch", "storage-repo-branch-coverage",
        "upload-build", "github-token",
    },
    "google/clusterfuzzlite/actions/run_fuzzers@v1": {
        "language", "fuzz-seconds", "dry-run", "sanitizer", "mode", "github-token",
        "storage-repo", "storage-repo-branch", "storage-repo-branch-coverage",
        "report-unreproducible-crashes", "minimize-crashes", "parallel-fuzzing",
        "output-sarif", "report-timeouts", "report-ooms",
    },
}
BUILD, RUN = sorted(ACTIONS)
REQUIRED = {RUN: {"github-token"}}
MODES = {"code-change", "batch", "coverage", "prune"}
SANITIZERS = {"address", "undefined", "memory", "coverage"}
STORAGE = ("storage-repo", "storage-repo-branch", "storage-repo-branch-coverage")
BASE_OS_TAG = {"legacy": "latest", "ubuntu-24-04": "ubuntu-24-04"}


def triggers(doc):
    # YAML 1.1 reads the key `on` as True.
    on = doc.get("on", doc.get(True))
    if isinstance(on, str):
        return {on}
    return set(on or ())


def sanitizers_of(value, job, where, problems):
    """The sanitizers a step's `sanitizer` input takes (a literal or a matrix)."""
    if value is None:
        return {"address"}  # both actions' default
    value = str(value)
    m = re.fullmatch(r"\$\{\{\s*matrix\.(\w+)\s*\}\}", value)
    if m:
        values = (((job.get("strategy") or {}).get("matrix") or {}).get(m.group(1)))
        if not isinstance(values, list) or not values:
            problems.append(f"{where}: sanitizer {value} has no matrix list")
            return set()
        return {str(v) for v in values}
    if "${{" in value:
        problems.append(f"{where}: sanitizer {value}: only a literal or ${{{{ matrix.NAME }}}} is checked")
        return set()
    return {value}


def check(root):
    root = pathlib.Path(root)
    problems = []
    project = yaml.safe_load((root / ".clusterfuzzlite/project.yaml").read_text()) or {}
    listed = set(project.get("sanitizers") or ())
    base_os = project.get("base_os_version", "legacy")
    from_line = next((l.strip() for l in (root / ".clusterfuzzlite/Dockerfile").read_text().splitlines()
                      if l.strip().startswith("FROM")), "")
    tag = from_line.split(":", 1)[1].strip() if ":" in from_line else ""
    if base_os not in BASE_OS_TAG:
        problems.append(f"project.yaml: base_os_version {base_os!r} is not one OSS-Fuzz supports")
    elif tag != BASE_OS_TAG[base_os]:
        problems.append(f"Dockerfile: FROM tag {tag!r}, but project.yaml's base_os_version {base_os} needs {BASE_OS_TAG[base_os]!r}")

    seen = {}  # mode -> list of (triggers, sanitizers, fuzz-seconds)
    files = sorted((root / ".github/workflows").glob("*.yml")) + sorted((root / ".github/workflows").glob("*.yaml"))
    if not files:
        problems.append(".github/workflows: no workflow file")
    for path in files:
        name = path.relative_to(root)
        try:
            doc = yaml.safe_load(path.read_text())
        except yaml.YAMLError as e:
            problems.append(f"{name}: not YAML: {str(e).splitlines()[0]}")
            continue
        if not isinstance(doc, dict) or not isinstance(doc.get("jobs"), dict):
            problems.append(f"{name}: no jobs")
            continue
        on = triggers(doc)
        for job_name, job in doc["jobs"].items():
            built = set()
            for i, step in enumerate(job.get("steps") or ()):
                where = f"{name}: jobs.{job_name}.steps[{i}]"
                uses = step.get("uses")
                if uses is None:
                    continue
                if uses not in ACTIONS:
                    problems.append(f"{where}: action {uses!r} is not one ClusterFuzzLite documents ({', '.join(sorted(ACTIONS))})")
                    continue
                inputs = step.get("with") or {}
                for key in inputs:
                    if key not in ACTIONS[uses]:
                        problems.append(f"{where}: {uses} has no input {key!r}")
                for key in REQUIRED.get(uses, ()):
                    if key not in inputs:
                        problems.append(f"{where}: {uses} needs {key!r}")
                sans = sanitizers_of(inputs.get("sanitizer"), job, where, problems)
                for s in sans - SANITIZERS:
                    problems.append(f"{where}: sanitizer {s!r} is not one ClusterFuzzLite runs")
                for s in sans - listed - {"coverage"}:
                    problems.append(f"{where}: sanitizer {s!r} is not in .clusterfuzzlite/project.yaml")
                if uses == BUILD:
                    built |= sans
                    continue
                mode = str(inputs.get("mode", "code-change"))
                if mode not in MODES:
                    problems.append(f"{where}: mode {mode!r} is not one of {', '.join(sorted(MODES))}")
                if sans != built:
                    problems.append(f"{where}: runs {sorted(sans)} but the job built {sorted(built)}")
                if (mode == "coverage") != (sans == {"coverage"}):
                    problems.append(f"{where}: mode {mode} with sanitizer {sorted(sans)} (coverage goes with coverage)")
                for key in STORAGE:
                    if key not in inputs:
                        problems.append(f"{where}: names no corpus storage: {key} missing")
                seen.setdefault(mode, []).append((on, sans, inputs.get("fuzz-seconds")))
    runs = seen.get("code-change", [])
    if not any("pull_request" in on and {"address", "undefined"} <= sans and str(secs) == "600"
               for on, sans, secs in runs):
        problems.append("workflows: no code-change run on pull_request with address and undefined for 600 s")
    if not any("schedule" in on for on, _, _ in seen.get("batch", [])):
        problems.append("workflows: no batch run on a schedule")
    for mode in ("prune", "coverage"):
        if mode not in seen:
            problems.append(f"workflows: no {mode} run")
    return problems


PLANTS = [
    # name, file, text to replace, replacement, what the check must say
    ("wrong input name", "cflite_pr.yml", "fuzz-seconds: 600", "fuzz-second: 600", "has no input 'fuzz-second'"),
    ("wrong action name", "cflite_batch.yml", "actions/run_fuzzers@v1", "actions/run_fuzzer@v1", "is not one ClusterFuzzLite documents"),
    ("not YAML", "cflite_cron.yml", "permissions: read-all", "permissions: [read-all", "not YAML"),
    ("no storage", "cflite_batch.yml", "          storage-repo-branch: ${{ vars.CFLITE_STORAGE_BRANCH || 'main' }}\n", "", "storage-repo-branch missing"),
    ("sanitizer not in project.yaml", "cflite_pr.yml", "          - undefined\n", "          - undefined\n          - memory\n", "'memory' is not in .clusterfuzzlite/project.yaml"),
]


def plant(root):
    root = pathlib.Path(root)
    failures = 0
    for name, file, old, new, expect in PLANTS:
        with tempfile.TemporaryDirectory() as tmp:
            copy = pathlib.Path(tmp)
            shutil.copytree(root / ".github", copy / ".github")
            shutil.copytree(root / ".clusterfuzzlite", copy / ".clusterfuzzlite")
            path = copy / ".github/workflows" / file
            text = path.read_text()
            if old not in text:
                print(f"plant {name}: {old!r} not in {file} (update the plant)")
                failures += 1
                continue
            path.write_text(text.replace(old, new, 1))
            found = [p for p in check(copy) if expect in p]
            if found:
                print(f"plant {name}: caught: {found[0]}")
            else:
                print(f"plant {name}: NOT caught")
                failures += 1
    return failures


def main(argv):
    if len(argv) == 3 and argv[1] == "--plant":
        failures = plant(argv[2])
        print(f"plants: {len(PLANTS) - failures} caught, {failures} missed")
        return 1 if failures else 0
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    problems = check(argv[1])
    for p in problems:
        print(p)
    if problems:
        return 1
    print("ClusterFuzzLite workflows and project: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
