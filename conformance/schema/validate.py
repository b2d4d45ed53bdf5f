#!/usr/bin/env python3
"""Validates the golden vectors and a sample of oracle answers against the
JSON Schemas of this directory (case, result, vector line).

    validate.py --vectors DIR [--oracle 'SEQPACK oracle --plain'] [--plant KIND]

Every line of DIR/*.jsonl must be a vector line (vector.schema.json); each
vector's case is then sent to the oracle (every view, the plain encoding)
and its answer must be a result (result.schema.json). Exits 0 when all hold,
1 with the first few violations named, 77 without python3-jsonschema.
--plant spoils one vector or answer the way a broken writer would (runs in a
vector, an integer past 2^53 in a pack, a missing field), to show the check
fails on it."""
import argparse
import glob
import json
import os
import shlex
import subprocess
import sys

try:
    import jsonschema
except ImportError:
    print("skipped: python3-jsonschema is absent (scripts/setup.sh installs it)")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
# The vectors that hold an integer past 2^53 outside data_seed, as
# conformance/vectors/README.md ("Integers past 2^53") lists them.
PAST_2_53 = {"strict-25", "strict-38", "strict-59", "strict-73", "strict-84", "strict-141", "strict-149",
             "strict-155", "strict-156", "strict-200"}


def fast_integer_lists(cls):
    """The validator with `items` of an integer range checked in one pass (the
    same rule; jsonschema's per-item descent costs a minute on the vectors'
    100,000s of row ids)."""
    general = cls.VALIDATORS["items"]

    def items(validator, schema, instance, full):
        if (isinstance(instance, list) and isinstance(schema, dict) and schema.get("type") == "integer"
                and set(schema) <= {"type", "minimum", "maximum"}):
            lo, hi = schema.get("minimum"), schema.get("maximum")
            for i, x in enumerate(instance):
                if isinstance(x, bool) or not isinstance(x, int):
                    yield jsonschema.ValidationError("%r at %d is not an integer" % (x, i))
                    return
                if (lo is not None and x < lo) or (hi is not None and x > hi):
                    yield jsonschema.ValidationError("%d at %d is out of [%s, %s]" % (x, i, lo, hi))
                    return
            return
        yield from general(validator, schema, instance, full)

    return jsonschema.validators.extend(cls, {"items": items})


def load_schemas():
    store = {}
    for name in ("case", "result", "vector"):
        with open(os.path.join(HERE, name + ".schema.json"), encoding="utf-8") as f:
            s = json.load(f)
        store[s["$id"]] = s
        store[name] = s
    validators = {}
    for name in ("case", "result", "vector"):
        resolver = jsonschema.RefResolver(store[name]["$id"], store[name], store=store)
        cls = jsonschema.validators.validator_for(store[name])
        cls.check_schema(store[name])
        validators[name] = fast_integer_lists(cls)(store[name], resolver=resolver)
    return validators


def errors_of(validator, doc):
    return sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))


def unsafe_integers(value, at):
    """Paths of integers past +-(2^53 - 1) (the views' contract, checked here:
    a recursive schema for it costs minutes on the larger answers)."""
    out = []
    stack = [(value, at)]
    while stack and len(out) < 5:
        x, p = stack.pop()
        if isinstance(x, bool):
            continue
        if isinstance(x, int):
            if abs(x) > 2 ** 53 - 1:
                out.append(p)
        elif isinstance(x, dict):
            stack.extend((v, p + "/" + k) for k, v in x.items())
        elif isinstance(x, list):
            stack.extend((v, p + "/%d" % i) for i, v in enumerate(x))
    return out


def where(e):
    return "/".join(str(p) for p in e.absolute_path) or "(top)"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vectors", required=True)
    ap.add_argument("--oracle", help="the oracle's command line (answers are validated when given)")
    ap.add_argument("--plant", choices=["runs-in-vector", "past-2^53-in-pack", "missing-field"])
    args = ap.parse_args()
    v = load_schemas()
    problems = []
    lines = []
    for path in sorted(glob.glob(os.path.join(args.vectors, "*.jsonl"))):
        with open(path, encoding="utf-8") as f:
            for n, text in enumerate(f, 1):
                if text.strip():
                    lines.append(("%s:%d" % (os.path.basename(path), n), json.loads(text)))
    if not lines:
        print("validate: no vector lines in %s" % args.vectors)
        return 1
    if args.plant == "runs-in-vector":
        exp = next(l for _, l in lines if "case" in l and l["expect"].get("ok"))["expect"]
        exp["pack"]["causal_rows"] = {"runs": [0, 2, 1]}
    elif args.plant == "missing-field":
        del next(l for _, l in lines if "case" in l)["case"]["layout"]["split_lens"]
    ids = set()
    for at, line in lines:
        for e in errors_of(v["vector"], line)[:2]:
            problems.append("%s: %s: %s" % (at, where(e), e.message[:200]))
        for r in line.get("expect", {}).get("results", [line.get("expect", {})]):
            for p in unsafe_integers(r.get("views", {}), "expect/views"):
                problems.append("%s: %s: an integer past 2^53" % (at, p))
        vid = (line.get("case") or line.get("session") or {}).get("id")
        without_seed = {k: v for k, v in line.get("case", {}).items() if k != "data_seed"}
        if vid not in PAST_2_53 and unsafe_integers([without_seed, line.get("session"), line.get("expect")], ""):
            problems.append("%s: %s holds an integer past 2^53 that the README does not list" % (at, vid))
        if vid in PAST_2_53 and not unsafe_integers([without_seed, line.get("expect")], ""):
            problems.append("%s: %s is listed as past 2^53 but holds no such integer" % (at, vid))
        if vid in ids:
            problems.append("%s: id %s appears twice" % (at, vid))
        ids.add(vid)
    answers = 0
    if args.oracle:
        requests = []
        # A sample: every fourth vector's case or session, every view asked.
        for _, line in lines[::4]:
            if "case" in line:
                requests.append(json.dumps(line["case"]))
            elif "session" in line:
                s = dict(line["session"])
                s.pop("views", None)
                requests.append(json.dumps(s))
        proc = subprocess.run(shlex.split(args.oracle), input="\n".join(
            [json.dumps({"type": "hello", "protocol": "seqpack-conformance/1"})] + requests) + "\n",
            capture_output=True, text=True, timeout=600)
        out = proc.stdout.splitlines()[1:]
        if len(out) != len(requests):
            problems.append("the oracle answered %d of %d requests" % (len(out), len(requests)))
        for k, text in enumerate(out):
            doc = json.loads(text)
            if args.plant == "past-2^53-in-pack" and doc.get("ok") and k == 0:
                doc["pack"]["max_num_tokens"] = 2 ** 53 + 1
            for e in errors_of(v["result"], doc)[:2]:
                problems.append("oracle answer %d (%s): %s: %s" % (k, doc.get("id"), where(e), e.message[:200]))
            for r in doc.get("results", [doc]):
                for p in unsafe_integers(r.get("views", {}), "views"):
                    problems.append("oracle answer %d (%s): %s: an integer past 2^53" % (k, doc.get("id"), p))
            answers += 1
    for p in problems[:20]:
        print("validate: " + p)
    if problems:
        print("validate: %d problems (%d shown)" % (len(problems), min(len(problems), 20)))
        return 1
    print("validate: %d vector lines and %d oracle answers hold the schemas" % (len(lines), answers))
    return 0


if __name__ == "__main__":
    sys.exit(main())
