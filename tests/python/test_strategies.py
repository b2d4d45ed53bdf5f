"""seqpack.strategies reaches the classes and edges of the C++ generators
(properties/src/generators_classes.cpp, required_classes): each class below, restated
here from the catalogue's classify(), shows up in a derandomized run; and the
strict profile plants every fault of the C++ generator, under its category."""
import os

from hypothesis import given, settings

from seqpack import strategies
from seqpack.strategies import TIER_EDGES, lcm, padded

PACKER_CLASSES = (
    ["bucket_edge:%d" % t for t in TIER_EDGES] +
    ["bucket_edge:on", "bucket_edge:below", "bucket_edge:above", "bucket_edge:image", "bucket_edge:video",
     "bucket_edge:cp>1", "bucket_edge:non_pow2_alignment", "alignment_multiple:cp>1", "alignment:odd",
     "alignment:large", "cp>1", "cuda_graphs", "marks_from_earlier_calls", "only_when_padded_already_aligned",
     "layout:unusual", "sample:empty", "empty_causal_split", "empty_full_split", "full_only", "samples:1",
     "samples:64+", "stream>20000", "und:unordered"] + ["row_bytes:%d" % w for w in (1, 2, 4, 8, 16)])


def is_pow2(v):
    return v > 0 and v & (v - 1) == 0


def classify(c):
    """The catalogue's classes of a valid case (a subset of classify())."""
    L, o = c.layout, c.options
    tags = set()
    causal = sum(n for m, n in zip(L.attn_modes, L.split_lens) if m == "causal")
    full = sum(n for m, n in zip(L.attn_modes, L.split_lens) if m == "full")
    nc = sum(1 for m in L.attn_modes if m == "causal")
    nf = len(L.attn_modes) - nc
    segment = nc == nf > 0
    if segment and o.pad_segment_only_when_padded:
        segment = o.pad_for_cuda_graphs or padded(causal, o.cp_world_size, False, o.causal_seq_alignment) != causal \
            or padded(full, o.cp_world_size, False, o.full_seq_alignment) != full
    for need, a in ((causal + segment, o.causal_seq_alignment), (full + segment, o.full_seq_alignment)):
        e = lcm(a, o.cp_world_size)
        for x in (need - 1, need, need + 1):
            if x < 1:
                continue
            where = "on" if need == x else "below" if need < x else "above"
            if o.pad_for_cuda_graphs and x in TIER_EDGES:
                tags |= {"bucket_edge:%d" % x, "bucket_edge:" + where,
                         "bucket_edge:image" if o.is_image_batch else "bucket_edge:video"}
                if not is_pow2(e):
                    tags.add("bucket_edge:non_pow2_alignment")
                if o.cp_world_size > 1:
                    tags.add("bucket_edge:cp>1")
            if x % e == 0 and o.cp_world_size > 1 and not is_pow2(e) and e >= 5 and need >= 1024:
                tags.add("alignment_multiple:cp>1")
    for a in (o.causal_seq_alignment, o.full_seq_alignment):
        if a > 1 and a % 2:
            tags.add("alignment:odd")
        if a >= 128:
            tags.add("alignment:large")
    if o.cp_world_size > 1:
        tags.add("cp>1")
    if o.pad_for_cuda_graphs:
        tags.add("cuda_graphs")
    m = c.marks
    if (m.image_causal, m.image_full, m.video_causal, m.video_full) != (0, 0, 0, 0):
        tags.add("marks_from_earlier_calls")
    if o.pad_segment_only_when_padded and nc == nf > 0 and \
            padded(causal, o.cp_world_size, o.pad_for_cuda_graphs, o.causal_seq_alignment) == causal and \
            padded(full, o.cp_world_size, o.pad_for_cuda_graphs, o.full_seq_alignment) == full:
        tags.add("only_when_padded_already_aligned")
    samples = len(L.sample_lens)
    if nf != samples or (nc != 0 and nc != samples):
        tags.add("layout:unusual")
    if 0 in list(L.sample_lens):
        tags.add("sample:empty")
    for mode, n in zip(L.attn_modes, L.split_lens):
        if n == 0:
            tags.add("empty_%s_split" % mode)
    if nc == 0:
        tags.add("full_only")
    if samples == 1:
        tags.add("samples:1")
    if samples >= 64:
        tags.add("samples:64+")
    if causal > 20000 or full > 20000:
        tags.add("stream>20000")
    if list(L.und_token_indexes) != sorted(L.und_token_indexes):
        tags.add("und:unordered")
    tags.add("row_bytes:%d" % c.row_bytes)
    return tags


def test_packer_cases_reach_the_generators_classes():
    seen = set()

    @settings(max_examples=int(os.environ.get("SEQPACK_STRATEGY_EXAMPLES", "300")))
    @given(case=strategies.cases("packer"))
    def draw(case):
        assert case.expect_error == "" and case.rows == sum(case.layout.sample_lens)
        seen.update(classify(case))

    draw()
    missing = [c for c in PACKER_CLASSES if c not in seen]
    assert not missing, "classes the packer strategy never reached: %s" % missing


# The C++ generator's fault names (fault_name() of generators_strict.cpp), the second half of a category.
CPP_FAULTS = {"option", "empty", "mode_count", "negative_length", "unknown_mode", "tiling_sum", "tiling_boundary",
              "und_out_of_range", "und_repeated", "und_in_full", "length", "overflow_alignment", "overflow_mark",
              "pairing"}


def test_strict_cases_plant_every_fault():
    names = CPP_FAULTS
    seen, classes = set(), set()

    @settings(max_examples=int(os.environ.get("SEQPACK_STRATEGY_EXAMPLES", "300")))
    @given(case=strategies.cases("strict"))
    def draw(case):
        if case.expect_error:
            seen.add(case.fault)
            classes.add(case.expect_error)
            assert case.category == case.expect_error + "/" + case.fault

    draw()
    assert names - seen == set(), "faults never planted: %s" % sorted(names - seen)
    assert classes == {"invalid_option", "empty_batch", "invalid_layout", "und_token_in_full_split",
                       "length_mismatch", "overflow", "pad_segment_pairing"}
