"""The "From pytest" section of docs/checking-your-port.md runs as written:
its two files are written out as they stand in the guide and its pytest
command runs with SEQPACK_MODULE naming the original module; every test in
them must pass. A guide whose code stops working fails here."""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
GUIDE = os.path.join(ROOT, "docs", "checking-your-port.md")


def section(text, title):
    start = text.index("\n## " + title + "\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end >= 0 else len(text)]


def blocks(text, lang):
    return re.findall(r"```%s\n(.*?)```" % lang, text, re.S)


def test_the_guide_runs_as_written(original_path, tmp_path):
    part = section(open(GUIDE, encoding="utf-8").read(), "From pytest")
    files = {}
    for block in blocks(part, "python"):
        first = block.split("\n", 1)[0]
        assert first.startswith("# ") and first.endswith(".py"), "a python block must start with '# <file>.py'"
        files[first[2:]] = block
    assert set(files) == {"conftest.py", "test_my_port.py"}, sorted(files)
    for name, body in files.items():
        (tmp_path / name).write_text(body, encoding="utf-8")
    commands = [b.strip() for b in blocks(part, "sh") if b.strip().startswith("/usr/bin/python3 -m pytest")]
    assert len(commands) == 1, commands
    env = dict(os.environ, SEQPACK_MODULE=original_path, SEQPACK_EXAMPLES="8",
               PYTHONPATH=os.pathsep.join(os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
                                          if p))
    # /usr/bin/python3 is the interpreter the package is built for (the one running this test).
    command = commands[0].replace("/usr/bin/python3 ", sys.executable + " ", 1)
    run = subprocess.run(["sh", "-c", command + " -rA"], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=240)
    out = run.stdout + run.stderr
    assert run.returncode == 0, out
    assert "PASSED test_my_port.py::test_conforms" in out, out
    assert "PASSED test_my_port.py::test_image_batches_under_context_parallelism" in out, out
