#!/usr/bin/env python3
"""An older revision of the original is judged on the semantics it has
(issue 28, point 7; PROTOCOL.md "Features"): the Python adapter declares the
options the module's build accepts and the views whose pack fields it has,
reports a pack field the module lacks as missing, and the default run on
ports/python/older_revision.py's revision (no pad_segment_only_when_padded,
the pad segment's row reserved on the full stream only) convicts it of the
pad segment alone, listing the option it lacks as not checked.

Usage: python_older_revision_test.py SEQPACK ORIGINAL VECTORS WORK [TEST...]
  (TEST: a unittest name, e.g. MissingFields, to run only it)
  (SEQPACK_ORIGINAL in the environment wins over ORIGINAL)
Exits 77 (CTest: skipped) when the original or torch is missing.
"""
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PORTS = os.path.join(ROOT, "ports", "python")
sys.path.insert(0, PORTS)
import older_revision  # noqa: E402
import seqpack_port  # noqa: E402

SEQPACK = ORIGINAL = VECTORS = WORK = None
torch = None
ALL_OPTIONS = ["is_image_batch", "cp_world_size", "pad_for_cuda_graphs", "full_seq_alignment",
               "causal_seq_alignment", "pad_segment_only_when_padded"]
HELLO = {"type": "hello", "protocol": "seqpack-conformance/1"}

# E1 of NOTES.md at alignment 1: two samples of one causal and one full row.
CASE = {"type": "case", "id": "E1", "rows": 4,
        "layout": {"sample_lens": [2, 2], "split_lens": [1, 1, 1, 1],
                   "attn_modes": ["causal", "full", "causal", "full"], "und_token_indexes": [0, 2]},
        "options": {"cp_world_size": 1, "pad_for_cuda_graphs": False, "is_image_batch": False,
                    "full_seq_alignment": 1, "causal_seq_alignment": 1, "pad_segment_only_when_padded": False},
        "graph_bounds": {"image": [0, 0], "video": [0, 0]}}


def source():
    with open(ORIGINAL, encoding="utf-8") as f:
        return f.read()


def edited(text, old, new=""):
    """`text` with `old` replaced once; fails the test when `old` is not there exactly once."""
    if text.count(old) != 1:
        raise AssertionError("%r occurs %d times in the original, not once" % (old, text.count(old)))
    return text.replace(old, new)


def port_for(text):
    """A Port on the module `text` (loaded as the adapter loads a file), after its hello."""
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(text)
    try:
        mod = seqpack_port.load(f.name)
    finally:
        os.unlink(f.name)
    seqpack_port.patch_int32_indexing(mod, torch)
    port = seqpack_port.Port(mod, torch)
    return port, port.handle(dict(HELLO))


def case(**options):
    c = json.loads(json.dumps(CASE))
    c["options"].update(options)
    return c


class Declared(unittest.TestCase):
    def test_the_original_declares_all_six_options_and_every_view(self):
        _, hello = port_for(source())
        self.assertEqual(hello["options"], ALL_OPTIONS)
        self.assertEqual(hello["views"], ["all_seq_padded", "cp_shards", "getters", "position_ids", "setters",
                                          "derived", "cp_local", "metadata_reuse", "payload", "dtypes", "error_marks",
                                          "session"])

    def test_the_older_revision_does_not_declare_the_option_it_lacks(self):
        port, hello = port_for(older_revision.older(source()))
        self.assertEqual(hello["options"], [o for o in ALL_OPTIONS if o != "pad_segment_only_when_padded"])
        # A case that sets it anyway (the runner sends none) is still refused by name.
        r = port.answer(case(pad_segment_only_when_padded=True))
        self.assertEqual((r["ok"], r["error"]), (False, "unsupported_option"))
        self.assertIn("pad_segment_only_when_padded", r["message"])

    def test_an_edit_that_does_not_apply_fails_naming_it(self):
        with self.assertRaisesRegex(ValueError, "full stream only.*matched 0 times"):
            older_revision.older(edited(source(), "need_causal = len_causal + 1", "need_causal = len_causal + 2"))


class MissingFields(unittest.TestCase):
    def test_a_pad_segment_field_the_module_lacks_is_missing_in_the_answer(self):
        text = edited(source(), 'pack["_sample_offsets_pad_segment"] = _append_pad_segment(',
                      'pack["_sample_offsets_pad_segment_not_yet"] = _append_pad_segment(')
        port, _ = port_for(text)
        r = port.answer(case())
        self.assertTrue(r["ok"], r)
        self.assertNotIn("sample_offsets", r["pack"]["pad_segment"])
        self.assertEqual(r["pack"]["pad_segment"]["causal_seq_offsets"], [0, 1, 2, 3])

    def test_sample_ids_the_module_lacks_are_missing_and_cp_local_is_not_declared(self):
        # A revision that keeps the causal sample ids under another name.
        self.assertEqual(source().count('"_causal_sample_ids"'), 3)
        port, hello = port_for(source().replace('"_causal_sample_ids"', '"_causal_ids_of_rows"'))
        self.assertNotIn("cp_local", hello["views"])
        self.assertIn("cp_shards", hello["views"])
        r = port.answer(case(cp_world_size=2))
        self.assertTrue(r["ok"], r)
        self.assertNotIn("causal_sample_ids", r["pack"])
        self.assertIn("full_only_sample_ids", r["pack"])
        self.assertEqual([s["causal_rows"] for s in r["views"]["cp_shards"]], [[0, 2], [-1, -1]])


GROUP = re.compile(r"^group \d+ of \d+: (.*): \d+ cases", re.MULTILINE)
PAD_FIELD = re.compile(r"^pack\.(pad_segment\b|\{causal,full_only\}_(rows|sample_ids))")


class DefaultRun(unittest.TestCase):
    """The default run (vectors and random cases, the original's known failures) on the older revision."""

    @classmethod
    def setUpClass(cls):
        os.makedirs(WORK, exist_ok=True)
        module = os.path.join(WORK, "older_revision.py")
        with open(module, "w", encoding="utf-8") as f:
            f.write(older_revision.older(source()))
        port = "%s %s %s" % (shlex.quote(sys.executable), shlex.quote(os.path.join(PORTS, "seqpack_port.py")),
                             shlex.quote(module))
        cmd = [SEQPACK, "conform", "--port", port, "--vectors", VECTORS,
               "--known-failures", os.path.join(PORTS, "original.known_failures")]
        start = time.monotonic()
        done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
        cls.rc, cls.out = done.returncode, done.stdout
        print("\n%s\n(exit %d, %.1f s)" % ("\n".join(l[:300] for l in cls.out.splitlines()
                                                      if l.startswith(("group ", "not checked", "conform:"))),
                                           cls.rc, time.monotonic() - start))
        cls.groups = GROUP.findall(cls.out)

    def test_it_fails(self):
        self.assertEqual(self.rc, 1, self.out[-3000:])

    def test_a_group_names_a_pad_segment_field(self):
        self.assertTrue(any(PAD_FIELD.match(g) for g in self.groups), self.groups)

    def test_no_group_is_an_unsupported_option_or_unclassified(self):
        for g in self.groups:
            self.assertNotIn("unsupported_option", g)
            self.assertNotIn("unclassified", g)

    def test_the_option_it_lacks_is_listed_as_not_checked(self):
        self.assertIn("not checked: option pad_segment_only_when_padded (", self.out)


def main():
    global SEQPACK, ORIGINAL, VECTORS, WORK, torch
    if len(sys.argv) < 5:
        sys.stderr.write("usage: python_older_revision_test.py SEQPACK ORIGINAL VECTORS WORK [TEST...]\n")
        return 2
    SEQPACK, ORIGINAL, VECTORS, WORK = sys.argv[1:5]
    ORIGINAL = os.environ.get("SEQPACK_ORIGINAL") or ORIGINAL
    if not os.path.isfile(ORIGINAL):
        print("skipped: the original module %s is absent (SEQPACK_ORIGINAL names it)" % ORIGINAL)
        return 77
    try:
        import torch as t
    except ImportError:
        print("skipped: %s has no torch" % sys.executable)
        return 77
    torch = t
    result = unittest.main(argv=[sys.argv[0], "-v"] + sys.argv[5:], exit=False).result
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
