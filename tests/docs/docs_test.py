#!/usr/bin/env python3
"""The docs run as written (issue 28): every shell block of README.md and
docs/checking-your-port.md runs from a copy of the repository in a temporary
directory away from it (so no `../shared` next to it), with this build's
`seqpack` as the docs' `build/default` (reused, not rebuilt); then planted
breaks in a copy of the docs must fail the same check.

Which blocks run (tests/docs/README.md):
  - fences ```sh, ```bash and ```console run; others (python, cpp, cmake,
    yaml, output without a language) are not shell and do not. In a console
    block the lines after a `$ ` prompt are the commands, the rest is output;
  - each block runs alone: a fresh `bash -e -o pipefail` in the copy's root,
    stdin from /dev/null, HOME a fresh directory, no PYTHONPATH; it must
    exit 0;
  - a marker on the line right before the fence changes that:
      <!-- docs-test: skip REASON -->   not run (set-up that installs
                                        packages or builds everything)
      <!-- docs-test: exit N -->        must exit N (a failing port's run)
    A marker anywhere else, or a skip without a reason, fails the test.

Usage: docs_test.py SOURCE_DIR BUILD_DIR [--no-plant] [--keep]
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

DOCS = ("README.md", "docs/checking-your-port.md")
SHELLS = ("sh", "bash", "console")
BLOCK_TIMEOUT = 300
MARKER = re.compile(r"^<!-- docs-test: (skip|exit)\b ?(.*?) ?-->$")


class Block:
    def __init__(self, doc, line, lang, text, skip, exit_status):
        self.doc, self.line, self.lang, self.text = doc, line, lang, text
        self.skip, self.exit = skip, exit_status

    def where(self):
        return "%s:%d" % (self.doc, self.line)

    def script(self):
        if self.lang != "console":
            return self.text
        out, going_on = [], False
        for line in self.text.splitlines():
            if line.startswith("$ ") or going_on:
                out.append(line[2:] if line.startswith("$ ") and not going_on else line)
                going_on = line.endswith("\\")
        return "\n".join(out) + "\n"


def parse(doc, text):
    """The shell blocks of a Markdown file, with their markers; ValueError
    on a marker that is not right before a shell fence."""
    blocks, lines = [], text.splitlines()
    fence, marker, i = None, None, 0
    while i < len(lines):
        line = lines[i]
        if fence is None:
            m = MARKER.match(line.strip())
            if line.startswith("<!-- docs-test"):
                if not m:
                    raise ValueError("%s:%d: unknown docs-test marker %r" % (doc, i + 1, line))
                if m.group(1) == "skip" and not m.group(2):
                    raise ValueError("%s:%d: a skip marker must say why" % (doc, i + 1))
                if m.group(1) == "exit" and not m.group(2).isdigit():
                    raise ValueError("%s:%d: an exit marker needs a status, got %r" % (doc, i + 1, m.group(2)))
                nxt = lines[i + 1] if i + 1 < len(lines) else ""
                if not nxt.startswith("```") or nxt[3:].split(" ")[0] not in SHELLS:
                    raise ValueError("%s:%d: a docs-test marker must stand right before a shell fence" % (doc, i + 1))
                marker = m
            elif line.startswith("```"):
                fence = (i + 1, line[3:].strip().split(" ")[0], [])
        elif line.startswith("```"):
            start, lang, body = fence
            if lang in SHELLS:
                skip = marker.group(2) if marker and marker.group(1) == "skip" else None
                status = int(marker.group(2)) if marker and marker.group(1) == "exit" else 0
                blocks.append(Block(doc, start, lang, "\n".join(body) + "\n", skip, status))
            fence, marker = None, None
        else:
            fence[2].append(line)
        i += 1
    if fence is not None:
        raise ValueError("%s:%d: unclosed fence" % (doc, fence[0]))
    return blocks


def copy_repository(src, dst):
    """The working tree as a clone would have it, uncommitted edits included:
    git's tracked and untracked-but-not-ignored files (everything but .git and
    build/ where the source is not a git checkout)."""
    listed = subprocess.run(["git", "-C", src, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            capture_output=True)
    if listed.returncode != 0:
        shutil.copytree(src, dst, symlinks=True, ignore=shutil.ignore_patterns(".git", "build"))
        return
    for rel in sorted(set(p for p in listed.stdout.decode().split("\0") if p)):
        path = os.path.join(src, rel)
        if not os.path.lexists(path) or os.path.isdir(path) and not os.path.islink(path):
            continue  # deleted in the working tree, or a submodule
        os.makedirs(os.path.dirname(os.path.join(dst, rel)), exist_ok=True)
        shutil.copy2(path, os.path.join(dst, rel), follow_symlinks=False)


def run_block(block, root, home):
    """(ok, message): the block's exit status against its expected one."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "OLDPWD")}
    env["HOME"] = home
    start = time.monotonic()
    try:
        run = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", block.script()], cwd=root, env=env,
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             timeout=BLOCK_TIMEOUT)
        status, out = run.returncode, run.stdout.decode(errors="replace")
    except subprocess.TimeoutExpired as e:
        status, out = "timeout after %d s" % BLOCK_TIMEOUT, (e.stdout or b"").decode(errors="replace")
    took = time.monotonic() - start
    if status == block.exit:
        return True, "ok   %s (exit %d, %.1f s)" % (block.where(), status, took)
    tail = "\n".join("     | " + l for l in out.splitlines()[-30:])
    return False, "FAIL %s: exit %s, the doc expects %d (%.1f s)\n     | %s\n%s" % (
        block.where(), status, block.exit, took, block.script().strip().replace("\n", "\n     | "), tail)


def check(root, home, docs, only=None):
    """Runs the docs' blocks (those not in `only`'s complement); returns the
    failure messages."""
    failures = []
    for doc in docs:
        try:
            blocks = parse(doc, open(os.path.join(root, doc), encoding="utf-8").read())
        except ValueError as e:
            failures.append("FAIL %s" % e)
            print(failures[-1], flush=True)
            continue
        for block in blocks:
            if only is not None and not only(block):
                continue
            if block.skip:
                print("skip %s (%s)" % (block.where(), block.skip), flush=True)
                continue
            ok, message = run_block(block, root, home)
            print(message, flush=True)
            if not ok:
                failures.append(message)
    return failures


def plant(root, home):
    """Breaks planted in a copy of the docs, each of which must fail: the
    issue's relative spec path, a misspelt subcommand, a wrong exit marker.
    Only the blocks the plant changed run."""
    guide, readme = DOCS[1], DOCS[0]
    plants = [
        (guide, "the relative ../shared spec path of issue 28", "$($B paths original)",
         "../shared/spec/000_a9109b401b6808be.txt"),
        (readme, "a misspelt subcommand", "$B oracle --case", "$B oracel --case"),
        (guide, "an exit marker that the block does not meet", "```sh\nB=build/default/cli/seqpack\n$B conform --port \"$B oracle\" --shard 0/2",
         "<!-- docs-test: exit 1 -->\n```sh\nB=build/default/cli/seqpack\n$B conform --port \"$B oracle\" --shard 0/2"),
        (guide, "a marker away from its fence", "<!-- docs-test: skip", "<!-- docs-test: skip misplaced -->\n\n<!-- docs-test: skip"),
    ]
    caught = 0
    for doc, what, old, new in plants:
        path = os.path.join(root, doc)
        text = open(path, encoding="utf-8").read()
        if old not in text:
            print("FAIL plant %r: %r is not in %s" % (what, old, doc))
            return False
        before = {(b.text, b.skip, b.exit) for b in parse(doc, text)}
        with open(path, "w", encoding="utf-8") as f:
            f.write(text.replace(old, new, 1))
        print("planted in %s: %s" % (doc, what), flush=True)
        failures = check(root, home, [doc], only=lambda b: (b.text, b.skip, b.exit) not in before)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        if not failures:
            print("FAIL: the docs test passed with %s planted in %s" % (what, doc))
            return False
        caught += 1
    print("docs_test: %d/%d planted breaks caught" % (caught, len(plants)))
    return True


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    if len(args) != 2:
        print(__doc__)
        return 2
    src, build = (os.path.abspath(a) for a in args)
    original = subprocess.run([os.path.join(build, "cli", "seqpack"), "paths", "original"], capture_output=True)
    if original.returncode != 0:  # the docs check the original; where it is absent there is nothing to run
        print("skipped: %s" % original.stderr.decode().strip())
        return 77
    work = tempfile.mkdtemp(prefix="seqpack-docs-")
    root, home = os.path.join(work, "seqpack"), os.path.join(work, "home")
    try:
        copy_repository(src, root)
        os.makedirs(os.path.join(root, "build"), exist_ok=True)
        os.symlink(build, os.path.join(root, "build", "default"))
        os.makedirs(home)
        print("docs_test: %s copied to %s, build/default -> %s" % (src, root, build), flush=True)
        start = time.monotonic()
        failures = check(root, home, DOCS)
        print("docs_test: %d failing blocks (%.1f s)" % (len(failures), time.monotonic() - start))
        if failures:
            return 1
        if "--no-plant" not in argv:
            # A fresh copy: the blocks above may have written into this one.
            shutil.rmtree(root)
            copy_repository(src, root)
            os.makedirs(os.path.join(root, "build"))
            os.symlink(build, os.path.join(root, "build", "default"))
            if not plant(root, home):
                return 1
        return 0
    finally:
        if "--keep" in argv:
            print("kept", work)
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
