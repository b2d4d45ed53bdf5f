#!/usr/bin/env python3
"""Writes an older revision of the original module, for checking that a port
of an older revision is judged on the semantics it has (issue 28, point 7;
PROTOCOL.md "Features").

Usage: older_revision.py ORIGINAL OUT

The revision is the original as it may have stood before two changes, made
by text substitution on ORIGINAL (each must apply exactly once, or the
script fails naming it, and writes nothing):

  1. `pad_segment_only_when_padded` does not exist yet: the parameter of
     `sequence_pack_from_packed_sequence`, its docstring entry and the block
     that reads it are removed, so the pad segment is added whenever the
     causal and full splits pair. The adapter's hello then does not declare
     the option, and the runner sends no case that sets it.
  2. An asymmetric pad segment, a plausible first version of it: the row
     reserved for the pad segment is reserved on the full (GEN) stream only,
     the stream whose queries were known to need a padded key range, and the
     assertion that the padding lands on both streams (added with the fix)
     is not there yet. The causal stream then gets a pad row only when
     alignment, context parallelism or CUDA graphs pad it anyway; otherwise
     its pad segment is an empty trailing segment, one row shorter than the
     original's (`pack.causal_rows`, `pack.causal_sample_ids`,
     `pack.pad_segment.causal_seq_offsets` differ).

Stdlib only. Exits 0 when OUT is written, 1 when a substitution does not apply.
"""
import re
import sys

OPTION = "pad_segment_only_when_padded"

# (what it does, pattern, replacement); every pattern must match exactly once.
EDITS = (
    ("drop the option's parameter",
     r"^    pad_segment_only_when_padded: bool = False,\n", ""),
    ("drop the option's docstring entry",
     r"^        pad_segment_only_when_padded \(bool\):.*\n(?:            .*\n)*", ""),
    ("drop the block that reads the option",
     r"^    if pad_segment_supported and pad_segment_only_when_padded:\n(?:        .*\n)+", ""),
    ("reserve the pad segment's row on the full stream only",
     r"^(    if pad_segment_supported:\n        need_causal = len_causal) \+ 1\n", r"\1\n"),
    ("drop the assertion that the padding lands on both streams",
     r"^        assert pad_causal > 0 and pad_full > 0, \(\n(?:            .*\n)+        \)\n", ""),
)


def older(text):
    """The older revision of `text`; ValueError naming the edit that did not apply."""
    for what, pattern, replacement in EDITS:
        text, n = re.subn(pattern, replacement, text, flags=re.MULTILINE)
        if n != 1:
            raise ValueError("%s: the pattern %r matched %d times, not once" % (what, pattern, n))
    if OPTION in text:
        line = text[:text.index(OPTION)].count("\n") + 1
        raise ValueError("%s is still named at line %d of the result" % (OPTION, line))
    return text


def main():
    if len(sys.argv) != 3:
        sys.stderr.write("usage: older_revision.py ORIGINAL OUT\n")
        return 2
    with open(sys.argv[1], encoding="utf-8") as f:
        text = f.read()
    try:
        text = older(text)
    except ValueError as exc:
        sys.stderr.write("older_revision.py: %s: %s\n" % (sys.argv[1], exc))
        return 1
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
