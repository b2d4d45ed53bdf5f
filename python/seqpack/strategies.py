"""Hypothesis strategies for SequencePack cases, with the classes and edges of
the C++ generators (properties/src/generators_*.cpp), written again for
Hypothesis so that they shrink the way its users expect: every choice lists
its plainest outcome first (one sample, short or empty splits, cp 1,
alignment 1, no CUDA graphs, no earlier marks), so a failing case shrinks
towards a few tokens under default options.

    layouts(...)   packer layouts: [causal, full] pairs or full-only samples
    options(...)   build options (cp 1-16, alignments, graphs, the pad-segment flag)
    marks()        CUDA-graph marks as earlier calls leave them
    cases(profile="packer" | "strict", **fixed)   seqpack.Case values

Every keyword of options() and cases() fixes that option or draws it from a
strategy you pass, so that an author can constrain them, also under
st.data():

    @given(st.data())
    def test_images_cp(data):
        case = data.draw(cases(is_image_batch=True, cp_world_size=st.sampled_from([2, 4])))

The packer profile has the packer's layouts, reaching the edges of the
padding arithmetic on purpose (on, one below and one above the bucket's tier
boundaries 2048/4096/8192/16384, its steps, and the multiples of the
effective alignment lcm(alignment, cp)), streams already aligned
(pad_segment_only_when_padded), odd and large alignments, marks of earlier
calls, empty splits and samples, 1 and 64+ samples, long streams, every row
width; and a small share of valid layouts beyond the packer's. The strict
profile adds those unusual layouts and a planted fault of each error class
(case.expect_error names the class, case.fault the fault, case.category the
known-failure key), alone or several at once.
"""
import functools
import math

from hypothesis import strategies as st

from ._core import Case, GraphMarks, Layout, Options

__all__ = ["TIER_EDGES", "bucket", "padded", "lcm", "layouts", "options", "marks", "cases", "packer_cases",
           "strict_cases", "unusual_cases", "planted_cases"]

INT32_MAX = 2 ** 31 - 1
INT64_MAX = 2 ** 63 - 1
INT64_MIN = -2 ** 63
TIER_EDGES = (2048, 4096, 8192, 16384)
_TIERS = ((0, 2048), (2048, 4096), (4096, 8192), (8192, 16384), (16384, 24576))
_OPTION_NAMES = ("cp_world_size", "pad_for_cuda_graphs", "is_image_batch", "full_seq_alignment",
                 "causal_seq_alignment", "pad_segment_only_when_padded")


# --- the padding arithmetic, as NOTES.md section 3 states it ------------------

def bucket(n):
    """The CUDA-graph bucket of a length: 128 up to 2048, doubling past each tier edge."""
    for edge, b in zip(TIER_EDGES, (128, 256, 512, 1024)):
        if n <= edge:
            return b
    return 2048


def lcm(a, b):
    return 0 if a < 1 or b < 1 else math.lcm(a, b)


def step(n, cp, graphs, a):
    s = a
    if graphs:
        s = lcm(s, bucket(n))
    return lcm(s, cp)


def padded(n, cp=1, graphs=False, a=1):
    """The least multiple of the step (lcm of alignment, bucket and cp) >= n."""
    s = step(n, cp, graphs, a)
    return -(-n // s) * s if s >= 1 else None


# --- choices that shrink to their first outcome --------------------------------

@functools.lru_cache(maxsize=4096)
def _ints(lo, hi):
    """st.integers(lo, hi), made once (building strategies costs more than drawing)."""
    return st.integers(lo, hi)


@functools.lru_cache(maxsize=4096)
def _pick(values):
    """st.sampled_from(values) of a tuple, made once."""
    return st.sampled_from(values)


@functools.lru_cache(maxsize=4096)
def _lists(top, n):
    """n integers in [0, top], made once."""
    return st.lists(st.integers(0, top), min_size=n, max_size=n)


def _weighted(draw, choices):
    """One of `choices` [(weight, value or strategy)], the first the plainest
    (a draw of 0 picks it, and Hypothesis shrinks draws towards 0)."""
    k = draw(_ints(0, sum(w for w, _ in choices) - 1))
    for w, value in choices:
        if k < w:
            return draw(value) if isinstance(value, st.SearchStrategy) else value
        k -= w
    raise AssertionError("unreachable")


def _coin(draw, yes, no, plain=False):
    """True `yes` times in `yes + no`; shrinks to `plain`."""
    return _weighted(draw, [(no, False), (yes, True)] if not plain else [(yes, True), (no, False)])


def _fixed(draw, fixed, name, default):
    """An option the caller fixed (a value or a strategy), else `default()`."""
    if name in fixed and fixed[name] is not None:
        v = fixed[name]
        return draw(v) if isinstance(v, st.SearchStrategy) else v
    return default()


def _spread(draw, total, parts):
    if parts == 0:
        return []
    cuts = sorted(draw(_lists(total, parts - 1)))
    out, prev = [], 0
    for c in cuts:
        out.append(c - prev)
        prev = c
    return out + [total - prev]


def _short_len(draw, longest):
    return _weighted(draw, [(1, 0), (4, _ints(1, longest))])


def _alignment_for(draw, cp):
    a = _weighted(draw, [(4, 1), (4, _pick((2, 3, 4, 5, 6, 7, 8, 12, 16, 64, 96, 128, 129, 256))), (1, None)])
    return cp * draw(_ints(1, 4)) if a is None else a  # None: a multiple of cp


def _edge_alignment(draw, cp):
    a = _weighted(draw, [(1, 1), (2, _pick((2, 4, 8, 16, 64, 128, 256))),
                         (6, _pick((3, 5, 6, 7, 9, 12, 14, 21, 24, 96, 129, 384, 896))), (1, None)])
    return cp * draw(_ints(1, 4)) if a is None else a


@st.composite
def options(draw, pairs=True, **fixed):
    """Build options as the packer's cases draw them; keywords fix an option
    (a value or a strategy). `pairs`: whether the layout can have a pad segment."""
    o = Options()
    o.cp_world_size = _fixed(draw, fixed, "cp_world_size", lambda: _weighted(draw, [(3, 1), (3, _ints(2, 16))]))
    o.causal_seq_alignment = _fixed(draw, fixed, "causal_seq_alignment", lambda: _alignment_for(draw, o.cp_world_size))
    o.full_seq_alignment = _fixed(draw, fixed, "full_seq_alignment", lambda: o.causal_seq_alignment
                                  if _coin(draw, 1, 2, plain=True) else _alignment_for(draw, o.cp_world_size))
    o.pad_for_cuda_graphs = _fixed(draw, fixed, "pad_for_cuda_graphs", lambda: _coin(draw, 1, 2))
    o.is_image_batch = _fixed(draw, fixed, "is_image_batch", lambda: draw(st.booleans()))
    o.pad_segment_only_when_padded = _fixed(draw, fixed, "pad_segment_only_when_padded",
                                            lambda: bool(pairs) and _coin(draw, 1, 2))
    return o


def _earlier_mark(draw):
    n = draw(_ints(1, 19999))
    return padded(n, draw(_ints(1, 8)), True, draw(_pick((1, 2, 7, 64, 128))))


@st.composite
def marks(draw):
    """CUDA-graph marks: none (3 in 5), or padded lengths of earlier batches
    under other cp sizes and alignments."""
    if not _coin(draw, 2, 3):
        return GraphMarks()
    m = [(_earlier_mark(draw) if _coin(draw, 2, 1) else 0) for _ in range(4)]
    return GraphMarks(image_causal=m[0], image_full=m[1], video_causal=m[2], video_full=m[3])


# --- edges -------------------------------------------------------------------------

def _edge_need(draw, a, cp, graphs):
    kind = _weighted(draw, [(3, "multiple"), (4, "tier"), (2, "step")])
    if kind == "tier":
        at = _weighted(draw, [(3, 2048), (2, 4096), (2, 8192), (2, 16384)])  # C++: 4, 2, 1, 1
    elif kind == "step":
        low, high = _TIERS[_weighted(draw, [(3, 0), (2, 1), (1, 2), (1, 3), (1, 4)])]
        s = step(high, cp, True, a)
        if s > high - low:
            s = bucket(high)
        at = s * draw(_ints(low // s + 1, high // s))
    else:
        e = lcm(a, cp)
        if _coin(draw, 1, 1, plain=True):
            target = min(e * draw(_ints(1, 8)), max(e, 24576))
        else:
            target = draw(_ints(1, 8192))
        if graphs and _coin(draw, 1, 1):
            s = step(target, cp, True, a)
            if s <= 24576:
                e = s
        at = max(1, target // e) * e
    return at + _weighted(draw, [(2, 0), (1, -1), (1, 1)])


def _edge_stream(draw, a, cp, graphs, reserve):
    for attempt in range(3):
        need = max(reserve, _edge_need(draw, a, cp, graphs))
        if attempt == 2 or padded(need, cp, graphs, a) <= 3 * need + 8192:
            return a, need - reserve
        a = draw(_pick((3, 5, 6, 7, 12))) if attempt == 0 else 1


def _aligned_total(draw, a, cp, graphs, may_be_empty):
    if may_be_empty and _coin(draw, 1, 4):
        return 0
    if not graphs:
        return lcm(a, cp) * draw(_ints(1, 5))
    target = _weighted(draw, [(1, _ints(1, 2048)), (2, _ints(2049, 19999))])
    n = padded(target, cp, True, a)
    while padded(n, cp, True, a) != n:
        n = padded(n, cp, True, a)
    return n


# --- the packer's layouts --------------------------------------------------------

def _assemble(causal, full, pairs):
    sample_lens, split_lens, modes = [], [], []
    for c, f in zip(causal, full):
        if pairs:
            modes += ["causal", "full"]
            split_lens += [c, f]
            sample_lens.append(c + f)
        else:
            modes.append("full")
            split_lens.append(f)
            sample_lens.append(f)
    layout = Layout(sample_lens=sample_lens, split_lens=split_lens, attn_modes=modes, und_token_indexes=[])
    layout.und_token_indexes = _und_tokens(layout)
    return layout


def _und_tokens(layout):
    out, pos = [], 0
    for mode, n in zip(layout.attn_modes, layout.split_lens):
        n = max(0, n)
        if mode == "causal":
            out.extend(range(pos, pos + n))
        pos += n
    return out


@st.composite
def layouts(draw, samples=None, pairs=None, causal_lens=None, full_lens=None):
    """Packer layouts of short splits: `samples` (1 to 8, or 64 to 80) samples
    of one [causal, full] pair each, or full-only samples (pairs=False); the
    und indexes are every causal position. Each keyword fixes its part (a
    value or a strategy); causal_lens/full_lens draw one length per sample."""
    fixed = {"samples": samples, "pairs": pairs}
    pairs = _fixed(draw, fixed, "pairs", lambda: _coin(draw, 3, 1, plain=True))
    n = _fixed(draw, fixed, "samples", lambda: _weighted(draw, [(2, 1), (6, _ints(2, 8)), (1, _ints(64, 80))]))
    causal = [draw(causal_lens) if causal_lens is not None else _short_len(draw, 12) for _ in range(n)]
    full = [draw(full_lens) if full_lens is not None else _short_len(draw, 40) for _ in range(n)]
    return _assemble(causal, full, pairs)


def _unorder(draw, und):
    """One case in four lists its und indexes out of order, as the C++
    generators do (the spec takes them as a set): reversed, or the odd
    positions first. Shrinks to the list as given."""
    order = _weighted(draw, [(6, "as_given"), (1, "reversed"), (1, "odd_first")])
    if order == "reversed":
        return und[::-1]
    if order == "odd_first":
        return und[1::2] + und[0::2]
    return und


def _finish(draw, c, layout):
    layout.und_token_indexes = _unorder(draw, list(layout.und_token_indexes))
    c.layout = layout
    c.rows = sum(layout.sample_lens)
    c.row_bytes = draw(_pick((4, 1, 2, 8, 16, 3, 12)))
    c.data_seed = draw(_ints(0, INT64_MAX))
    return c


@st.composite
def packer_cases(draw, **fixed):
    """The packer's cases (gen_packer_case without its unusual share).

    Unlike the C++ generator, cp, graphs and the batch kind are drawn once,
    before the case's size class, with one distribution for every class (cp 1
    in half the cases, else 2-16; graphs in half), so that Hypothesis can
    shrink a case from an edge class to a short one and keep them: with the
    C++ weights (graphs in 3 edge cases of 4, in 1 short case of 3) a fault
    that needs graphs would shrink no further than the edge."""
    c = Case()
    pairs = _coin(draw, 3, 1, plain=True)
    n = _weighted(draw, [(2, 1), (6, _ints(2, 8)), (1, _ints(64, 80))])
    size = _weighted(draw, [(8, "free"), (5, "edge"), (2, "aligned"), (1, "long")])
    o = Options()
    o.cp_world_size = _fixed(draw, fixed, "cp_world_size", lambda: _weighted(draw, [(3, 1), (3, _ints(2, 16))]))
    o.pad_for_cuda_graphs = _fixed(draw, fixed, "pad_for_cuda_graphs", lambda: _coin(draw, 1, 1))
    o.is_image_batch = _fixed(draw, fixed, "is_image_batch", lambda: draw(st.booleans()))
    cp, graphs = o.cp_world_size, o.pad_for_cuda_graphs
    if size == "edge":
        align = lambda: _edge_alignment(draw, cp)  # noqa: E731
    elif size == "aligned":
        align = lambda: draw(st.sampled_from([1, 2, 3, 6, 12, 64, 96, 128, 256] if graphs else  # noqa: E731
                                             [1, 2, 3, 5, 6, 7, 12, 64, 128, 256]))
    else:
        align = lambda: _alignment_for(draw, cp)  # noqa: E731
    o.causal_seq_alignment = _fixed(draw, fixed, "causal_seq_alignment", align)
    o.full_seq_alignment = _fixed(draw, fixed, "full_seq_alignment", lambda: o.causal_seq_alignment
                                  if _coin(draw, 1, 2, plain=True) else align())
    # With graphs a due segment stays whatever the flag (NOTES.md 4.5): edge
    # cases set the flag only then, so that the reserved row is known before
    # the lengths are; aligned cases are where the flag matters.
    o.pad_segment_only_when_padded = _fixed(
        draw, fixed, "pad_segment_only_when_padded", lambda: bool(pairs) and (
            True if size == "aligned" else (size != "edge" or graphs) and _coin(draw, 1, 1)))
    c.marks = draw(marks())
    reserve = 1 if pairs else 0
    if size == "free":
        causal = [_short_len(draw, 12) for _ in range(n)]
        full = [_short_len(draw, 40) for _ in range(n)]
    elif size == "edge":
        # One stream or both on, one below or one above an edge of their own
        # alignment (the need counts the pad segment's row), mostly without
        # earlier marks, which would hide the edge.
        on = _weighted(draw, [(2, "full"), (1, "causal"), (1, "both")]) if pairs else "full"
        if on == "full":
            causal = [_short_len(draw, 12) for _ in range(n)]
        else:
            a, total = _edge_stream(draw, o.causal_seq_alignment, cp, graphs, reserve)
            if "causal_seq_alignment" not in fixed:
                o.causal_seq_alignment = a
            causal = _spread(draw, total, n)
        if on == "causal":
            full = [_short_len(draw, 40) for _ in range(n)]
        else:
            a, total = _edge_stream(draw, o.full_seq_alignment, cp, graphs, reserve)
            if "full_seq_alignment" not in fixed:
                o.full_seq_alignment = a
            full = _spread(draw, total, n)
        if _coin(draw, 3, 1, plain=True):
            c.marks = GraphMarks()
    elif size == "aligned":
        # Streams already on a multiple of everything that pads them (with
        # graphs, whole buckets to the 2048 tier).
        causal = _spread(draw, _aligned_total(draw, o.causal_seq_alignment, cp, graphs, True), n)
        full = _spread(draw, _aligned_total(draw, o.full_seq_alignment, cp, graphs, False), n)
        if _coin(draw, 1, 1, plain=True):
            c.marks = GraphMarks()
    else:  # a long full stream
        causal = [_short_len(draw, 30) for _ in range(n)]
        full = _spread(draw, draw(_ints(20001, 23999)), n)
    c.options = o
    return _finish(draw, c, _assemble(causal, full, pairs))


# --- layouts beyond the packer's -----------------------------------------------------

def _pair_samples(k):
    return [[False, True] for _ in range(k)]


def _insert_anywhere(draw, modes, sample):
    modes.insert(draw(_ints(0, len(modes))), sample)


def _unpairable_modes(draw, several):
    others = draw(_ints(1 if several else 0, 3))
    kind = draw(_ints(1 if several else 0, 2))
    if kind == 0:  # one sample of two or three [causal, full] pairs (NOTES.md 5, E7)
        return [[False, True] * draw(_ints(2, 3))]
    m = _pair_samples(others)
    if kind == 1:  # a causal-only and a full-only sample among pairs
        _insert_anywhere(draw, m, [False])
        _insert_anywhere(draw, m, [True])
    else:  # a sample with two full splits
        _insert_anywhere(draw, m, [False, True, False, True])
    return m


def _unusual_modes(draw):
    if _coin(draw, 2, 3):
        return _unpairable_modes(draw, False)
    m = []
    for _ in range(draw(_ints(1, 5))):
        if _coin(draw, 1, 8):
            m.append([])
            continue
        fulls = _weighted(draw, [(3, 1), (1, 0), (1, 2)])
        sample = [False] * draw(_ints(1 if fulls == 0 else 0, 3))
        for _ in range(fulls):
            sample.insert(draw(_ints(0, len(sample))), True)
        m.append(sample)
    return m


def _fill(draw, modes):
    sample_lens, split_lens, attn, owner = [], [], [], []
    for s, sample in enumerate(modes):
        total = 0
        for full in sample:
            n = _short_len(draw, 20 if full else 6)
            attn.append("full" if full else "causal")
            split_lens.append(n)
            owner.append(s)
            total += n
        sample_lens.append(total)
    return Layout(sample_lens=sample_lens, split_lens=split_lens, attn_modes=attn, und_token_indexes=[]), owner


def _counts(layout):
    causal = sum(1 for m in layout.attn_modes[:len(layout.split_lens)] if m == "causal")
    full = min(len(layout.split_lens), len(layout.attn_modes)) - causal
    return causal, full, len(layout.sample_lens)


def _unpairable(layout):
    causal, full, samples = _counts(layout)
    return causal == full and full > 0 and full != samples


def _align_streams(c, layout, owner):
    split_lens, sample_lens = list(layout.split_lens), list(layout.sample_lens)
    for full in (False, True):
        e = lcm(c.options.full_seq_alignment if full else c.options.causal_seq_alignment, c.options.cp_world_size)
        idx = [j for j, m in enumerate(layout.attn_modes) if (m == "full") == full]
        if not idx:
            continue
        add = (e - sum(split_lens[j] for j in idx) % e) % e
        split_lens[idx[-1]] += add
        sample_lens[owner[idx[-1]]] += add
    layout.split_lens, layout.sample_lens = split_lens, sample_lens


@st.composite
def unusual_cases(draw, **fixed):
    """Valid layouts beyond the packer's: 0-3 causal and 0-2 full splits per
    sample, empty samples, and layouts that cannot pair where no pad segment
    is due (pad_segment_only_when_padded, no graphs, aligned streams)."""
    c = draw(packer_cases(**fixed))
    layout, owner = _fill(draw, _unusual_modes(draw))
    if _unpairable(layout) and (fixed.get("pad_for_cuda_graphs") is True or
                                fixed.get("pad_segment_only_when_padded") is False):
        # Valid only where no pad segment is due, which the fixed options rule out.
        layout, owner = _fill(draw, _pair_samples(len(layout.sample_lens)))
    if _unpairable(layout):
        o = c.options
        o.pad_segment_only_when_padded = True
        o.pad_for_cuda_graphs = False
        o.cp_world_size = _fixed(draw, fixed, "cp_world_size", lambda: draw(_pick((1, 1, 2, 3, 5))))
        o.causal_seq_alignment = _fixed(draw, fixed, "causal_seq_alignment",
                                        lambda: draw(_pick((1, 2, 3, 4, 7, 8))))
        o.full_seq_alignment = _fixed(draw, fixed, "full_seq_alignment", lambda: o.causal_seq_alignment
                                      if _coin(draw, 1, 1, plain=True) else draw(_pick((1, 2, 3, 4, 7, 8))))
        c.options = o
        _align_streams(c, layout, owner)
    und = _und_tokens(layout)
    if draw(st.booleans()) and und:
        und.pop()
    layout.und_token_indexes = _unorder(draw, und)
    c.layout = layout
    c.rows = sum(layout.sample_lens)
    return c


# --- planted faults (strict) ----------------------------------------------------------

_CLASS = {"option": "invalid_option", "negative_mark": "invalid_option", "empty": "empty_batch",
          "und_in_full": "und_token_in_full_split", "length": "length_mismatch",
          "overflow_alignment": "overflow", "overflow_lcm": "overflow", "overflow_mark": "overflow",
          "overflow_interleaved": "overflow", "pairing": "pad_segment_pairing", "pairing_layout": "pad_segment_pairing"}
_NAME = {"negative_mark": "option", "negative": "negative_length", "negative_sample": "negative_length",
         "und_range": "und_out_of_range", "und_repeat": "und_repeated", "overflow_lcm": "overflow_alignment",
         "overflow_interleaved": "overflow_mark", "pairing_layout": "pairing"}
FAULTS = ("option", "negative_mark", "empty", "mode_count", "negative", "negative_sample", "unknown_mode",
          "tiling_sum", "tiling_boundary", "und_range", "und_repeat", "und_in_full", "length", "overflow_alignment",
          "overflow_lcm", "overflow_mark", "overflow_interleaved", "pairing", "pairing_layout")
_ORDER = ("invalid_option", "empty_batch", "invalid_layout", "und_token_in_full_split", "length_mismatch", "overflow",
          "pad_segment_pairing")
_COMBOS = (("option", "tiling_sum"), ("option", "length"), ("option", "und_in_full"), ("option", "empty"),
           ("option", "pairing_layout"), ("option", "tiling_sum", "length"), ("negative_mark", "length"),
           ("negative_mark", "overflow_mark"), ("empty", "length"), ("empty", "overflow_mark"),
           ("mode_count", "length"), ("negative", "length"), ("negative_sample", "overflow_mark"),
           ("unknown_mode", "length"), ("tiling_sum", "overflow_alignment"), ("tiling_boundary", "length"),
           ("und_range", "und_in_full"), ("und_in_full", "length"), ("und_in_full", "pairing_layout"),
           ("length", "pairing_layout"), ("overflow_mark", "pairing_layout"), ("overflow_interleaved", "pairing"))


def _append_full_row(c, L):
    L["sample_lens"].append(1)
    L["split_lens"].append(1)
    L["attn_modes"].append("full")
    c.rows += 1


def _full_rows(L):
    return sum(n for m, n in zip(L["attn_modes"], L["split_lens"]) if m == "full" and n > 0)


def _plant(draw, c, L, fault):
    """Plants `fault` into case `c` whose layout is the dict `L`."""
    end = sum(L["sample_lens"])
    o, m = c.options, c.marks

    def relist():
        L["und_token_indexes"] = _und_tokens(Layout(**L))

    if fault == "option":
        bad = draw(_pick((0, -1, -7, INT64_MIN)))
        setattr(o, draw(_pick(("cp_world_size", "full_seq_alignment", "causal_seq_alignment"))), bad)
    elif fault == "negative_mark":
        setattr(m, draw(_pick(("image_causal", "image_full", "video_causal", "video_full"))),
                draw(_pick((-1, -128, INT64_MIN))))
    elif fault == "empty":
        length_planted = c.rows != end
        L["sample_lens"] = []
        if draw(st.booleans()):
            L.update(split_lens=[], attn_modes=[], und_token_indexes=[])
        c.rows = draw(_ints(1, 3)) if length_planted else 0
    elif fault == "mode_count":
        if draw(st.booleans()) or not L["attn_modes"]:
            L["attn_modes"].append("full")
        else:
            L["attn_modes"].pop()
    elif fault == "negative":
        if not L["split_lens"]:
            _append_full_row(c, L)
        L["split_lens"][draw(_ints(0, len(L["split_lens"]) - 1))] = -draw(_ints(1, 4))
    elif fault == "negative_sample":
        if not L["sample_lens"]:
            _append_full_row(c, L)
        L["sample_lens"][draw(_ints(0, len(L["sample_lens"]) - 1))] = -draw(_pick((1, 3, INT64_MAX)))
    elif fault == "unknown_mode":
        if not L["attn_modes"]:
            _append_full_row(c, L)
        L["attn_modes"][draw(_ints(0, len(L["attn_modes"]) - 1))] = draw(
            _pick(("sliding", "Causal", "", "full ")))
    elif fault == "tiling_sum":
        if not L["split_lens"]:
            _append_full_row(c, L)
        L["split_lens"][draw(_ints(0, len(L["split_lens"]) - 1))] += 1
        relist()
    elif fault == "tiling_boundary":
        L["sample_lens"][:0] = [2, 2]
        L["split_lens"][:0] = [1, 2, 1]
        L["attn_modes"][:0] = ["causal", "full", "full"]
        relist()
        c.rows += 4
    elif fault == "und_range":
        L["und_token_indexes"].append(draw(_pick((-1, end, end + 5, INT64_MAX))))
        L["und_token_indexes"] = _unorder(draw, L["und_token_indexes"])
    elif fault == "und_repeat":
        und = L["und_token_indexes"]
        und.append(end if not und else und[draw(_ints(0, len(und) - 1))])
        L["und_token_indexes"] = _unorder(draw, und)
    elif fault == "und_in_full":
        L["sample_lens"].append(3)
        L["split_lens"] += [1, 2]
        L["attn_modes"] += ["causal", "full"]
        relist()
        L["und_token_indexes"].append(end + 1)
        L["und_token_indexes"] = _unorder(draw, L["und_token_indexes"])
        c.rows += 3
    elif fault == "length":
        c.rows += draw(_pick((1, -1)))
        if c.rows < 0:
            c.rows = end + 1
    elif fault == "overflow_alignment":
        _append_full_row(c, L)
        o.full_seq_alignment = draw(_pick((2 ** 31, 2 ** 40, INT64_MAX)))
    elif fault == "overflow_lcm":
        if _full_rows(L) == 0:
            _append_full_row(c, L)
        o.cp_world_size, o.full_seq_alignment, graphs = draw(st.sampled_from(
            [(65521, 65537, None), (65536, 65537, None), (3, 1431655766, None), (1, 33554433, True)]))
        if graphs:
            o.pad_for_cuda_graphs = True
    elif fault == "overflow_mark":
        o.pad_for_cuda_graphs = True
        m.image_full = m.video_full = draw(_pick((2 ** 31, INT64_MAX)))
    elif fault == "overflow_interleaved":
        causal, full, _ = _counts(Layout(**L))
        if causal != full or full == 0:
            layout, _ = _fill(draw, _pair_samples(draw(_ints(1, 3))))
            L.update(sample_lens=list(layout.sample_lens), split_lens=list(layout.split_lens),
                     attn_modes=list(layout.attn_modes))
            relist()
            c.rows = sum(L["sample_lens"])
        o.pad_for_cuda_graphs = True
        mc = draw(_pick((1073741824, 1200000000, INT32_MAX)))
        mf = INT32_MAX - mc + draw(_ints(1, 999))
        if o.is_image_batch:
            m.image_causal, m.image_full = mc, mf
        else:
            m.video_causal, m.video_full = mc, mf
    elif fault in ("pairing", "pairing_layout"):
        modes = [[False, True] * draw(_ints(2, 3))] if fault == "pairing" else _unpairable_modes(draw, True)
        layout, _ = _fill(draw, modes)
        L.update(sample_lens=list(layout.sample_lens), split_lens=list(layout.split_lens),
                 attn_modes=list(layout.attn_modes))
        relist()
        c.rows = sum(L["sample_lens"])
        if fault == "pairing":
            o.pad_segment_only_when_padded = False
            o.causal_seq_alignment = o.full_seq_alignment = 1
            o.cp_world_size = draw(_ints(1, 3))
            m = GraphMarks()
        else:
            o.pad_segment_only_when_padded = _coin(draw, 1, 1)
            if o.pad_segment_only_when_padded:
                o.pad_for_cuda_graphs = True
            o.cp_world_size = draw(_pick((1, 2, 3)))
            o.causal_seq_alignment = draw(_pick((1, 2, 3, 7, 8)))
            o.full_seq_alignment = draw(_pick((1, 2, 3, 7, 8)))
    c.options, c.marks = o, m
    return _CLASS.get(fault, "invalid_layout"), _NAME.get(fault, fault)


def _planted(draw, faults, **fixed):
    c = draw(packer_cases(**fixed))
    lay = c.layout
    L = {"sample_lens": list(lay.sample_lens), "split_lens": list(lay.split_lens),
         "attn_modes": list(lay.attn_modes), "und_token_indexes": list(lay.und_token_indexes)}
    named = []
    for f in reversed(faults):  # later classes first, as the C++ generator plants them
        named.append(_plant(draw, c, L, f))
    c.layout = Layout(**L)
    cls, name = min(named, key=lambda cn: _ORDER.index(cn[0]))
    c.expect_error, c.fault = cls, name
    return c


@st.composite
def planted_cases(draw, faults=None, **fixed):
    """A packer case with one planted fault (`faults`: the ones to draw from,
    default all of FAULTS); expect_error names its class."""
    return _planted(draw, [draw(st.sampled_from(list(faults or FAULTS)))], **fixed)


@st.composite
def _precedence_cases(draw, **fixed):
    return _planted(draw, list(draw(st.sampled_from(_COMBOS))), **fixed)


def cases(profile="packer", **fixed):
    """seqpack.Case values of a profile, as the runner's generators draw them:
    "packer" (16 packer cases to 1 unusual valid layout) or "strict" (2
    packer, 1 unusual, 5 planted faults, 1 several faults at once). Keywords
    fix options (values or strategies), e.g. is_image_batch=True."""
    if profile == "packer":
        return _one_of([(16, packer_cases(**fixed)), (1, unusual_cases(**fixed))])
    if profile == "strict":
        return _one_of([(2, packer_cases(**fixed)), (1, unusual_cases(**fixed)), (5, planted_cases(**fixed)),
                        (1, _precedence_cases(**fixed))])
    raise ValueError("profile: expected 'packer' or 'strict', got %r" % (profile,))


def strict_cases(**fixed):
    return cases("strict", **fixed)


@st.composite
def _one_of(draw, choices):
    return _weighted(draw, choices)
