"""The bindings: data movement bit for bit for every NumPy and torch dtype
(compared as bytes, with NaN payloads, signalling NaNs and -0.0 planted),
the binding's packs against the oracle's protocol answers, the marks as an
object, errors as classes carrying field and value, and the size limit."""
import json

import numpy as np
import pytest
import torch
from hypothesis import given, settings, strategies as st

import seqpack
from seqpack import _core, strategies

NUMPY_DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
                np.float16, np.float32, np.float64, np.longdouble, np.complex64, np.complex128, np.dtype("V3"),
                np.dtype([("a", "<i2"), ("b", ">f8")])]
TORCH_DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16,
                torch.bfloat16, torch.float32, torch.float64, torch.complex64, torch.complex128]

# E1-like layout of three samples: [causal 2, full 3], [causal 1, full 2], [causal 0, full 1]; cp 2 with
# graphs pads both streams and adds the pad segment.
LAYOUT = seqpack.Layout(sample_lens=[5, 3, 1], split_lens=[2, 3, 1, 2, 0, 1],
                        attn_modes=["causal", "full"] * 3, und_token_indexes=[0, 1, 5])
CAUSAL_POS, FULL_POS = [0, 1, 5], [2, 3, 4, 6, 7, 8]


def raw_bytes(n, width, seed):
    """n rows of `width` random bytes, with a quiet NaN with payload, a
    signalling NaN and -0.0 (of every float width) planted in the first rows."""
    b = np.random.default_rng(seed).integers(0, 256, size=(n, width), dtype=np.uint8)
    specials = [(0x7FF80000DEADBEEF).to_bytes(8, "little"), (0x7F800001).to_bytes(4, "little"),
                (0x8000000000000000).to_bytes(8, "little"), (0x7E01).to_bytes(2, "little")]
    for r, s in enumerate(specials[:n]):
        k = min(len(s), width)
        b[r, :k] = np.frombuffer(s[:k], np.uint8)
    return b


def numpy_rows(dtype, n, seed, trailing=(2,)):
    dtype = np.dtype(dtype)
    count = n * int(np.prod(trailing))
    if dtype == np.bool_:
        return np.random.default_rng(seed).integers(0, 2, size=(n,) + trailing).astype(np.bool_)
    b = raw_bytes(count, dtype.itemsize, seed)
    return b.reshape(-1).view(dtype).reshape((n,) + trailing)


def torch_bytes(t):
    t = t.contiguous()
    if t.is_complex():
        t = torch.view_as_real(t)
    size = t.element_size()
    return t.view({1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[size]).numpy().tobytes()


def torch_rows(dtype, n, seed, trailing=(2,)):
    if dtype == torch.bool:
        return torch.from_numpy(np.random.default_rng(seed).integers(0, 2, size=(n,) + trailing).astype(np.bool_))
    size = torch.empty(0, dtype=dtype).element_size()
    b = raw_bytes(n * int(np.prod(trailing)), size, seed)
    inner = {1: np.uint8, 2: np.int16, 4: np.int32, 8: np.int64, 16: np.int64}[size]
    t = torch.from_numpy(b.reshape(-1).view(inner).copy())
    if dtype.is_complex:
        real = torch.float32 if dtype == torch.complex64 else torch.float64
        return torch.view_as_complex(t.view(real).reshape(-1, 2)).reshape((n,) + trailing)
    return t.view(dtype).reshape((n,) + trailing)


def as_bytes(x):
    return torch_bytes(x) if isinstance(x, torch.Tensor) else np.ascontiguousarray(x).tobytes()


def rows_bytes(x, idx):
    """The bytes of rows `idx` of x, picked in Python from x's own bytes."""
    per = len(as_bytes(x)) // x.shape[0]
    raw = as_bytes(x)
    return b"".join(raw[i * per:(i + 1) * per] for i in idx)


def check_moves_bytes(packed, other):
    marks = seqpack.GraphMarks()
    opts = seqpack.Options(cp_world_size=2, pad_for_cuda_graphs=True)
    pack = seqpack.build_pack(packed, LAYOUT, opts, marks)
    per = len(as_bytes(packed)) // packed.shape[0]
    causal, full = pack.causal_seq, pack.full_only_seq
    assert type(causal) is type(packed) and causal.dtype == packed.dtype and causal.shape[1:] == packed.shape[1:]
    # Streams: the layout's rows in order, then zero bytes.
    assert as_bytes(causal)[:3 * per] == rows_bytes(packed, CAUSAL_POS)
    assert as_bytes(full)[:6 * per] == rows_bytes(packed, FULL_POS)
    assert set(as_bytes(causal)[3 * per:]) <= {0} and set(as_bytes(full)[6 * per:]) <= {0}
    # Round trips: get_all_seq, the padded interleaved stream, from_all_seq, shards.
    assert as_bytes(seqpack.get_all_seq(pack)) == as_bytes(packed)
    assert as_bytes(seqpack.get_all_seq_padded(pack)[0])[:9 * per] == as_bytes(packed)
    assert as_bytes(seqpack.get_all_seq(seqpack.from_all_seq(packed, pack))) == as_bytes(packed)
    shards = seqpack.shard_pack_all(pack, 2)
    gathered = seqpack.gather_shards(shards)
    assert as_bytes(gathered.causal_seq) == as_bytes(causal) and as_bytes(gathered.full_only_seq) == as_bytes(full)
    half = causal.shape[0] // 2
    assert as_bytes(shards[1].causal_seq) == as_bytes(causal[half:])
    # Setters: the other buffer's rows land bit for bit.
    seqpack.set_all_seq(pack, other)
    assert as_bytes(seqpack.get_all_seq(pack)) == as_bytes(other)
    und = other[:1].repeat(causal.shape[0], *([1] * (other.dim() - 1))) if isinstance(other, torch.Tensor) else \
        np.repeat(other[:1], causal.shape[0], axis=0)
    seqpack.set_und_seq(pack, und)
    assert as_bytes(seqpack.get_und_seq(pack)) == as_bytes(und)
    derived = seqpack.from_mode_splits(und, full, pack)
    assert as_bytes(derived.causal_seq) == as_bytes(und) and as_bytes(derived.full_only_seq) == as_bytes(full)


@pytest.mark.parametrize("dtype", NUMPY_DTYPES, ids=str)
def test_numpy_rows_move_bit_for_bit(dtype):
    check_moves_bytes(numpy_rows(dtype, 9, 1), numpy_rows(dtype, 9, 2))


@pytest.mark.parametrize("dtype", TORCH_DTYPES, ids=str)
def test_torch_rows_move_bit_for_bit(dtype):
    check_moves_bytes(torch_rows(dtype, 9, 1), torch_rows(dtype, 9, 2))


def test_rows_of_any_shape_and_strides():
    """A 3-D row shape, a strided view and a 1-D buffer keep their bytes."""
    a = numpy_rows(np.float32, 9, 3, trailing=(2, 3))
    check_moves_bytes(a, numpy_rows(np.float32, 9, 4, trailing=(2, 3)))
    strided = numpy_rows(np.float64, 18, 5, trailing=(1,))[::2]
    pack = seqpack.build_pack(strided, LAYOUT)
    assert seqpack.get_all_seq(pack).tobytes() == np.ascontiguousarray(strided).tobytes()
    flat = np.arange(9, dtype=np.int16)
    assert seqpack.get_all_seq(seqpack.build_pack(flat, LAYOUT)).tobytes() == flat.tobytes()


def test_zeros_like_keeps_the_dtype_with_a_new_row_shape():
    pack = seqpack.build_pack(torch_rows(torch.bfloat16, 9, 1), LAYOUT)
    z = seqpack.zeros_like(pack, shape=(-1, 3))
    # 3 causal and 6 full rows, each stream with the pad segment's row.
    assert z.causal_seq.dtype == torch.bfloat16 and tuple(z.causal_seq.shape) == (4, 3)
    assert torch_bytes(z.full_only_seq) == bytes(7 * 3 * 2)


def self_naming(n):
    return np.arange(1, n + 1, dtype=np.int32).reshape(n, 1)


VIEWS = ["all_seq_padded", "cp_shards", "getters", "position_ids"]


def names(a):
    """The protocol's row names of self-naming rows (value - 1; padding -1)."""
    return (np.asarray(a).reshape(-1).astype(np.int64) - 1).tolist()


@settings(max_examples=40)
@given(case=strategies.cases("packer"))
def test_binding_packs_are_the_oracles(case):
    """The pack and views the binding computes equal the oracle's protocol
    answer (another path out of the reference: nlohmann-json, not pybind11)."""
    want = json.loads(_core.result_line(case, "b", VIEWS))
    marks = seqpack.GraphMarks(image_causal=case.marks.image_causal, image_full=case.marks.image_full,
                               video_causal=case.marks.video_causal, video_full=case.marks.video_full)
    pack = seqpack.build_pack(self_naming(case.rows), case.layout, case.options, marks)
    got, views = want["pack"], want["views"]
    assert names(pack.causal_seq) == got["causal_rows"]
    assert names(pack.full_only_seq) == got["full_only_rows"]
    assert pack.causal_sample_ids.tolist() == got["causal_sample_ids"]
    assert pack.full_only_sample_ids.tolist() == got["full_only_sample_ids"]
    for key in ("sample_offsets", "causal_seq_offsets", "full_only_seq_offsets", "causal_indices", "full_indices"):
        assert getattr(pack.meta, key).tolist() == got[key], key
    assert (pack.pad_segment is None) == (got["pad_segment"] is None)
    if pack.pad_segment is not None:
        for key in ("causal_seq_offsets", "full_only_seq_offsets", "sample_offsets"):
            assert getattr(pack.pad_segment, key).tolist() == got["pad_segment"][key], key
        for key in ("max_causal_len", "max_full_len", "max_sample_len"):
            assert getattr(pack.pad_segment, key) == got["pad_segment"][key], key
    assert [[marks.image_causal, marks.image_full], [marks.video_causal, marks.video_full]] == \
        [want["graph_bounds"]["image"], want["graph_bounds"]["video"]]
    g = views["getters"]
    assert names(seqpack.get_und_seq(pack)) == g["und_rows"] and names(seqpack.get_gen_seq(pack)) == g["gen_rows"]
    assert names(seqpack.get_all_seq(pack)) == g["all_seq_rows"]
    for fn, key in ((seqpack.get_causal_seq_padded, "causal_padded"), (seqpack.get_full_only_seq_padded,
                                                                        "full_only_padded"),
                    (seqpack.get_all_seq_padded, None)):
        seq, offsets, max_len = fn(pack)
        w = g[key] if key else views["all_seq_padded"]
        assert (names(seq), offsets.tolist(), max_len) == (w["rows"], w["offsets"], w["max_len"]), key
    assert seqpack.has_pad_segment(pack) == g["has_pad_segment"]
    assert list(seqpack.get_num_real_tokens(pack)) == g["num_real_tokens"]
    ids = np.arange(case.rows, dtype=np.int64)
    ids3 = np.stack([ids + a * (1 << 26) for a in range(3)])
    p = views["position_ids"]
    assert seqpack.get_und_position_ids(ids, pack).tolist() == p["und"]
    assert seqpack.get_gen_position_ids(ids3, pack).tolist() == p["gen_3d"]
    if "cp_shards" in views and isinstance(views["cp_shards"], list):
        for shard, w in zip(seqpack.shard_pack_all(pack, case.options.cp_world_size), views["cp_shards"]):
            assert (names(shard.causal_seq), names(shard.full_only_seq)) == (w["causal_rows"], w["full_only_rows"])
            assert list(seqpack.get_num_real_tokens(shard)) == [w["num_causal_tokens_local"],
                                                                w["num_full_tokens_local"]]


def test_position_ids_and_their_shards():
    pack = seqpack.build_pack(self_naming(9), LAYOUT, seqpack.Options(cp_world_size=2))
    ids = torch.arange(100, 109)
    assert seqpack.get_und_position_ids(ids, pack).tolist() == [100 + p for p in CAUSAL_POS]
    ids3 = np.stack([np.arange(9) + 10 * a for a in range(3)])
    assert seqpack.get_gen_position_ids(ids3, pack).tolist() == [[10 * a + p for p in FULL_POS] for a in range(3)]
    # Causal stream of 3 + 1 (pad segment) = 4 rows, full of 6 + 1 padded to 8: rank 1 holds causal
    # rows 2-3 (packed position 5, padding) and full rows 4-7 (positions 7, 8, padding).
    assert seqpack.shard_position_ids(np.arange(100, 109), pack, 1, 2).tolist() == [105, 0, 107, 108, 0, 0]


def test_marks_are_an_explicit_object():
    a, b = seqpack.GraphMarks(), seqpack.GraphMarks()
    seqpack.build_pack(self_naming(9), LAYOUT, seqpack.Options(pad_for_cuda_graphs=True, is_image_batch=True), a)
    assert (a.image_causal, a.image_full, a.video_causal, a.video_full) == (128, 128, 0, 0)
    assert b == seqpack.GraphMarks()
    before = a.copy()
    with pytest.raises(seqpack.LengthMismatch):
        seqpack.build_pack(self_naming(8), LAYOUT, seqpack.Options(pad_for_cuda_graphs=True), a)
    assert a == before
    assert seqpack.get_padding_stats(a)["MAX_FULL_LEN_IMAGE_BATCH"] == 128


@pytest.mark.parametrize("call,cls,field,value", [
    (lambda: seqpack.build_pack(self_naming(9), LAYOUT, seqpack.Options(cp_world_size=0)),
     seqpack.InvalidOption, "options.cp_world_size", 0),
    (lambda: seqpack.build_pack(self_naming(9), LAYOUT, marks=seqpack.GraphMarks(video_full=-3)),
     seqpack.InvalidOption, "graph_bounds.video.full", -3),
    (lambda: seqpack.build_pack(self_naming(0), {"sample_lens": [], "split_lens": [], "attn_modes": []}),
     seqpack.EmptyBatch, "sample_lens", []),
    (lambda: seqpack.build_pack(self_naming(9), {"sample_lens": [5, 3, 1], "split_lens": [2, 3, 1, 2, 0, 1],
                                                 "attn_modes": ["causal", "full", "causal", "sliding", "causal",
                                                                "full"]}),
     seqpack.InvalidLayout, "attn_modes[3]", "sliding"),
    (lambda: seqpack.build_pack(self_naming(9), {"sample_lens": [5, 3, 1], "split_lens": [2, 3, 1, 2, 0, 1],
                                                 "attn_modes": ["causal", "full"] * 3, "und_token_indexes": [2]}),
     seqpack.UndTokenInFullSplit, "und_token_indexes", [2]),
    (lambda: seqpack.build_pack(self_naming(8), LAYOUT), seqpack.LengthMismatch, "rows", 8),
    (lambda: seqpack.build_pack(self_naming(9), LAYOUT, seqpack.Options(full_seq_alignment=2 ** 40)),
     seqpack.Overflow, "options.full_seq_alignment", 2 ** 40),
    (lambda: seqpack.build_pack(self_naming(4), {"sample_lens": [4], "split_lens": [1, 1, 1, 1],
                                                 "attn_modes": ["causal", "full"] * 2}),
     seqpack.PadSegmentPairing, "split_lens", [1, 1, 1, 1]),
    (lambda: seqpack.shard_pack(seqpack.build_pack(self_naming(9), LAYOUT), 0, 2),
     seqpack.NotDivisible, None, None),
    (lambda: seqpack.get_all_seq(seqpack.shard_pack(seqpack.build_pack(self_naming(9), LAYOUT,
                                                                       seqpack.Options(cp_world_size=2)), 1, 2)),
     seqpack.ShardedPack, "pack.is_sharded", None),
    (lambda: seqpack.build_pack(self_naming(9), LAYOUT, prepared=seqpack.prepare_metadata(
        {"sample_lens": [9], "split_lens": [9], "attn_modes": ["full"]})),
     seqpack.MetadataMismatch, "prepared_metadata", None),
    (lambda: seqpack.shard_pack(seqpack.build_pack(self_naming(9), LAYOUT, seqpack.Options(cp_world_size=2)), 5, 2),
     seqpack.InvalidArgument, "rank", 5),
], ids=lambda v: v.__name__ if isinstance(v, type) else None)
def test_errors_are_classes_with_field_and_value(call, cls, field, value):
    with pytest.raises(cls) as info:
        call()
    e = info.value
    assert isinstance(e, seqpack.Error)
    assert e.error_class == {v: k for k, v in seqpack.errors.CLASSES.items()}[cls]
    assert str(e).startswith(e.error_class + ": " + e.field + ": ")
    if field is not None:
        assert e.field == field
        assert e.value == value


def test_every_class_is_named_after_its_protocol_class():
    for name, cls in seqpack.errors.CLASSES.items():
        assert cls.__name__ == "".join(p.capitalize() for p in name.split("_")) and cls.error_class == name
        assert issubclass(cls, seqpack.Error) and getattr(seqpack, cls.__name__) is cls


def test_huge_marks_are_refused_before_allocating():
    """A mark of 2^30 rows (valid for the reference) asks for gigabytes: the
    binding refuses it by arithmetic, before allocating."""
    marks = seqpack.GraphMarks(video_full=2 ** 30)
    with pytest.raises(seqpack.InvalidArgument, match="limit"):
        seqpack.build_pack(self_naming(9), LAYOUT, seqpack.Options(pad_for_cuda_graphs=True), marks)
    assert marks.video_full == 2 ** 30
    with pytest.raises(seqpack.InvalidArgument, match="CPU|device|expected"):
        seqpack.build_pack(np.array(1.0), LAYOUT)
    with pytest.raises(seqpack.InvalidArgument):
        seqpack.build_pack(np.array([object()] * 9), LAYOUT)


@settings(max_examples=30)
@given(data=st.data())
def test_strategies_compose_with_data(data):
    """Constrained draws keep their constraints (only image batches, cp in {2, 4})."""
    case = data.draw(strategies.cases("packer", is_image_batch=True, cp_world_size=st.sampled_from([2, 4])))
    assert case.options.is_image_batch and case.options.cp_world_size in (2, 4)
    assert case.rows == sum(case.layout.sample_lens)
    layout = data.draw(strategies.layouts(samples=st.integers(1, 3), pairs=False))
    assert set(layout.attn_modes) <= {"full"} and 1 <= len(layout.sample_lens) <= 3
