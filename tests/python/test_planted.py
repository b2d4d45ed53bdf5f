"""Planted faults in copies of the original (mutants of
ports/python/mutate.py, as ports/python/mutation_score.py makes them, the
ones tests/conformance/CMakeLists.txt plants for the subprocess runner):
assert_conforms under Hypothesis catches each and shrinks it to a case of a
few tokens (or, for a fault of the bucket edge, to that edge)."""
import os
import sys

import pytest
from hypothesis import assume, given, settings

from seqpack import strategies
from seqpack.testing import ConformanceFailure, assert_conforms, load_module

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# (mutant id, profile or strategy, most tokens the shrunk case may hold, what the fault is). CI runs the
# first three (the suite's minute: a packer fault, a strict one, one through a constrained strategy);
# SEQPACK_PLANTED=all runs every one.
PLANTED = [
    ("_grow_cuda_graph_bounds:cmp-negate:3", "packer", 4, "the video causal mark"),
    ("prepare_sequence_pack_metadata:drop-assert:1", "strict", 4, "the und-in-full check dropped"),
    # pad_segment_pairing/pairing is a known failure of the original (its marks under CUDA graphs), so
    # the strict profile skips it: pairing faults without graphs, where the original agrees.
    ("sequence_pack_from_packed_sequence:drop-assert:3",
     lambda: strategies.planted_cases(faults=["pairing"], pad_for_cuda_graphs=False), 8, "the pairing check dropped"),
    ("num_local_real_tokens:arith:1", "packer", 4, "a rank's real-token count"),
    ("get_gen_position_ids:swap-name:1", "packer", 4, "gen position ids gathered with the causal indices"),
]
if os.environ.get("SEQPACK_PLANTED") != "all":
    PLANTED = PLANTED[:3]


@pytest.fixture(scope="module")
def mutants(original_path):
    sys.path.insert(0, os.path.join(ROOT, "ports", "python"))
    try:
        import mutate
    finally:
        sys.path.pop(0)
    return {m.id: m.text for m in mutate.mutants(mutate.read_module(original_path))}


def shrunk_failure(module, profile, known, max_examples):
    """The case Hypothesis reports for `module` (the shrunk one), or None.
    `profile`: a profile's name, or a function making the strategy (whose
    cases are all checked)."""
    strategy = strategies.cases(profile) if isinstance(profile, str) else profile()
    known = known if isinstance(profile, str) else set()

    @settings(max_examples=max_examples)
    @given(case=strategy)
    def conforms(case):
        assume(case.category not in known)
        assert_conforms(module, case)

    try:
        conforms()
    except ConformanceFailure as failure:
        return failure
    return None


@pytest.mark.parametrize("ident,profile,most_tokens,what", PLANTED, ids=[p[0] for p in PLANTED])
def test_planted_fault_is_caught_and_shrunk(mutants, known_failures, tmp_path, ident, profile, most_tokens, what):
    path = tmp_path / (ident.replace(":", "_") + ".py")
    path.write_text(mutants[ident], encoding="utf-8")
    module = load_module(str(path))
    failure = shrunk_failure(module, profile, known_failures, 300)
    assert failure is not None, "planted fault %s (%s) not caught" % (ident, what)
    tokens = sum(failure.case.layout.sample_lens)
    print("%s: shrunk to %d tokens: %s\n  %s" % (ident, tokens, failure.case.to_json(), failure.diff))
    assert tokens <= most_tokens, "planted fault %s shrunk to %d tokens only: %s" % (ident, tokens, failure)
    # The runner's consequence line comes with the in-process failure too (issue 27).
    assert failure.severity in ("metadata-only", "not-judged", "crash-or-refusal", "nan-only", "wrong-output",
                                "silent-wrong-gradient"), failure
    assert failure.consequence.startswith("consequence [cosmos-5eee9ed on fa3") and failure.consequence in str(failure), failure


def test_in_process_failure_carries_the_derivation_block(mutants, tmp_path):
    """Issue 28: an in-process failure of a length or offset words the
    reference's derivation as `seqpack conform` does, between the first
    difference and the consequence line."""
    import seqpack
    path = tmp_path / "pad_segment_two_rows.py"
    path.write_text(mutants["_append_pad_segment:const:1"], encoding="utf-8")
    module = load_module(str(path))
    case = seqpack.Case.from_json('{"layout":{"sample_lens":[3],"split_lens":[1,2],"attn_modes":["causal","full"],'
                                  '"und_token_indexes":[0]},"rows":3,"graph_bounds":{"image":[0,0],"video":[0,0]},'
                                  '"options":{"cp_world_size":1,"causal_seq_alignment":1,"full_seq_alignment":1,'
                                  '"pad_for_cuda_graphs":false,"is_image_batch":true,'
                                  '"pad_segment_only_when_padded":false}}')
    with pytest.raises(ConformanceFailure) as info:
        assert_conforms(module, case, case_id="d1")
    text = str(info.value)
    assert "offsets" in info.value.diff, text
    assert "\n  how the reference derives the streams (NOTES.md sections 3 and 4):\n" in text, text
    assert "    pad segment: yes (1 causal and 1 full splits pair)\n" in text, text
    assert text.index("first difference") < text.index("how the reference derives") < text.index("consequence ["), text
