"""seqpack: the SequencePack reference (C++) inside Python.

The operations of the original module's API over NumPy arrays and CPU torch
tensors of any dtype and row shape, computed by seqpack's C++ reference
(reference/), bit for bit; the CUDA-graph high-water marks as an explicit
object (GraphMarks) that the caller threads through builds; errors as the
exception classes of seqpack.errors, named after the protocol's error
classes, carrying the field and its value.

    import numpy as np, seqpack
    layout = seqpack.Layout(sample_lens=[3, 2], split_lens=[1, 2, 1, 1],
                            attn_modes=["causal", "full", "causal", "full"], und_token_indexes=[0, 3])
    marks = seqpack.GraphMarks()
    pack = seqpack.build_pack(np.arange(5.0).reshape(5, 1), layout, seqpack.Options(cp_world_size=2), marks)
    seqpack.get_all_seq_padded(pack)   # (rows, offsets, max_len)

Submodules: seqpack.testing (assert_conforms, a ready @given test),
seqpack.strategies (Hypothesis strategies of the C++ generators' classes),
seqpack.pytest_plugin (--seqpack-module).
"""
from . import _core, errors
from ._core import Case, GraphMarks, Layout, Metadata, Options, PadSegment, padded_size, row_limit, set_row_limit
from ._rows import Format, from_bytes, ids_in, ints_out, to_bytes
from .errors import *  # noqa: F401,F403 (the exception classes)

__version__ = "0.1.0"

# Reprs that evaluate back (Hypothesis prints a falsifying case with them).
Case.__repr__ = lambda self: "seqpack.Case.from_json(%r)" % self.to_json()
Layout.__repr__ = lambda self: "seqpack.Layout(sample_lens=%r, split_lens=%r, attn_modes=%r, und_token_indexes=%r)" % (
    list(self.sample_lens), list(self.split_lens), list(self.attn_modes), list(self.und_token_indexes))
Options.__repr__ = lambda self: "seqpack.Options(%s)" % ", ".join(
    "%s=%r" % (k, getattr(self, k)) for k in ("cp_world_size", "pad_for_cuda_graphs", "is_image_batch",
                                             "full_seq_alignment", "causal_seq_alignment",
                                             "pad_segment_only_when_padded"))

__all__ = ["Case", "Format", "GraphMarks", "Layout", "Metadata", "Options", "Pack", "PadSegment", "build_pack",
           "errors", "from_all_seq", "from_mode_splits", "from_und_gen_splits", "gather_shards", "get_all_seq",
           "get_all_seq_padded", "get_causal_seq", "get_causal_seq_padded", "get_full_only_seq",
           "get_full_only_seq_padded", "get_gen_position_ids", "get_gen_seq", "get_num_real_tokens",
           "get_padding_stats", "get_und_position_ids", "get_und_seq", "has_pad_segment", "num_local_real_tokens",
           "padded_size", "plan_pack", "prepare_metadata", "row_limit", "set_all_seq", "set_gen_seq", "set_row_limit",
           "set_und_seq", "shard_pack", "shard_pack_all", "shard_position_ids", "validate_layout", "validate_options",
           "zeros_like"] + list(errors.__all__)


def _layout(layout):
    if isinstance(layout, Layout):
        return layout
    if isinstance(layout, dict):
        return Layout(sample_lens=[int(v) for v in layout["sample_lens"]],
                      split_lens=[int(v) for v in layout["split_lens"]], attn_modes=list(layout["attn_modes"]),
                      und_token_indexes=[int(v) for v in layout.get("und_token_indexes", [])])
    raise errors.InvalidArgument("invalid_argument: layout: expected a seqpack.Layout or a dict, got %s"
                                 % type(layout).__name__, "layout", "expected a seqpack.Layout or a dict",
                                 type(layout).__name__)


def _options(options):
    if options is None:
        return Options()
    if isinstance(options, Options):
        return options
    if isinstance(options, dict):
        return Options(**options)
    raise errors.InvalidArgument("invalid_argument: options: expected a seqpack.Options or a dict, got %s"
                                 % type(options).__name__, "options", "expected a seqpack.Options or a dict",
                                 type(options).__name__)


def _resolve(field, context):
    """The value of `field` ("split_lens[3]", "options.cp_world_size",
    "graph_bounds.image.full") among the call's inputs, or None."""
    name, index = field, None
    if field.endswith("]") and "[" in field:
        name, _, rest = field.partition("[")
        try:
            index = int(rest[:-1])
        except ValueError:
            return None
    for key in (name, name.split(".")[-1]):
        if key in context:
            value = context[key]
            if index is None:
                return value
            try:
                return value[index]
            except (IndexError, TypeError):
                return None
    return None


def _context(layout=None, options=None, marks=None, **more):
    ctx = dict(more)
    if layout is not None:
        for key in ("sample_lens", "split_lens", "attn_modes", "und_token_indexes"):
            ctx[key] = list(getattr(layout, key))
    if options is not None:
        for key in ("cp_world_size", "pad_for_cuda_graphs", "is_image_batch", "full_seq_alignment",
                    "causal_seq_alignment", "pad_segment_only_when_padded"):
            ctx["options." + key] = ctx.setdefault(key, getattr(options, key))
    if marks is not None:
        for kind in ("image", "video"):
            for half in ("causal", "full"):
                ctx["graph_bounds.%s.%s" % (kind, half)] = getattr(marks, "%s_%s" % (kind, half))
    return ctx


def _call(fn, context, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except errors.Error as e:
        if e.value is None:
            e.value = _resolve(e.field, context)
        raise


class Pack:
    """A sequence pack (the reference's Pack) with the caller's row format per
    stream. Fields read as the original's dict keys do, as arrays of the
    caller's kind (NumPy or torch)."""

    __slots__ = ("_p", "_causal", "_full")

    def __init__(self, core, causal_fmt, full_fmt):
        self._p, self._causal, self._full = core, causal_fmt, full_fmt

    def _ints(self, a):
        return ints_out(a, self._causal)

    @property
    def meta(self):
        return self._p.meta

    @property
    def causal_seq(self):
        return from_bytes(self._p.causal_seq, self._causal)

    @property
    def full_only_seq(self):
        return from_bytes(self._p.full_only_seq, self._full)

    @property
    def causal_sample_ids(self):
        return self._ints(self._p.causal_sample_ids)

    @property
    def full_only_sample_ids(self):
        return self._ints(self._p.full_only_sample_ids)

    @property
    def pad_segment(self):
        return self._p.pad_segment

    @property
    def is_sharded(self):
        return self._p.is_sharded

    @property
    def num_causal_tokens_local(self):
        return self._p.num_causal_tokens_local

    @property
    def num_full_tokens_local(self):
        return self._p.num_full_tokens_local

    @property
    def max_num_tokens(self):
        return self._p.max_num_tokens

    def __repr__(self):
        return "seqpack.Pack(causal %d rows, full %d rows, %s%s)" % (
            self._p.causal_seq.shape[0], self._p.full_only_seq.shape[0], "pad segment" if self._p.pad_segment else
            "no pad segment", ", sharded" if self._p.is_sharded else "")


def _wrap(core, causal_fmt, full_fmt=None):
    return Pack(core, causal_fmt, causal_fmt if full_fmt is None else full_fmt)


def validate_options(options, marks=None):
    """invalid_option unless cp size and alignments are >= 1 and the marks >= 0."""
    options = _options(options)
    marks = GraphMarks() if marks is None else marks
    _call(_core.validate_options, _context(options=options, marks=marks), options, marks)


def validate_layout(layout):
    """The layout checks of a build (empty_batch, invalid_layout, und_token_in_full_split)."""
    layout = _layout(layout)
    _call(_core.validate_layout, _context(layout), layout)


def prepare_metadata(layout):
    """Validated, reusable metadata of a layout (the original's
    prepare_sequence_pack_metadata); pass it to build_pack as `prepared`."""
    layout = _layout(layout)
    return _call(_core.prepare_metadata, _context(layout), layout)


def plan_pack(meta, rows, options=None, marks=None):
    """(causal_len, full_len, pad_segment, marks_after) of a build, without building."""
    options = _options(options)
    marks = GraphMarks() if marks is None else marks
    return _call(_core.plan_pack, _context(options=options, marks=marks, rows=rows), meta, int(rows), options, marks)


def build_pack(packed, layout, options=None, marks=None, prepared=None):
    """Packs `packed` ([sum(sample_lens), ...], any dtype) by `layout` (the
    original's sequence_pack_from_packed_sequence). `marks` (a GraphMarks) is
    the CUDA-graph state, raised in place on success and untouched on error;
    None uses a fresh one."""
    layout, options = _layout(layout), _options(options)
    marks = GraphMarks() if marks is None else marks
    u8, fmt = to_bytes(packed, "packed")
    ctx = _context(layout, options, marks, rows=u8.shape[0], packed=u8.shape[0])
    return _wrap(_call(_core.build_pack, ctx, u8, layout, options, marks, prepared), fmt)


def get_und_seq(pack):
    """The causal stream, padded."""
    return pack.causal_seq


def get_gen_seq(pack):
    """The full stream, padded."""
    return pack.full_only_seq


def set_und_seq(pack, value):
    """Replaces the causal stream (the stream's row count, any row shape)."""
    u8, fmt = to_bytes(value, "value")
    _call(_core.set_und_seq, {"value": tuple(getattr(value, "shape", ()))}, pack._p, u8)
    pack._causal = fmt


def set_gen_seq(pack, value):
    """Replaces the full stream (the stream's row count, any row shape)."""
    u8, fmt = to_bytes(value, "value")
    _call(_core.set_gen_seq, {"value": tuple(getattr(value, "shape", ()))}, pack._p, u8)
    pack._full = fmt


def get_causal_seq(pack):
    """(causal stream, its plain offsets)."""
    return pack.causal_seq, pack._ints(pack.meta.causal_seq_offsets)


def get_full_only_seq(pack):
    """(full stream, its plain offsets)."""
    return pack.full_only_seq, pack._ints(pack.meta.full_only_seq_offsets)


def get_causal_seq_padded(pack):
    """(causal stream, offsets, max_len) for varlen attention: the pad segment's when the pack has one."""
    seq, offsets, max_len = _call(_core.get_causal_seq_padded, {}, pack._p)
    return from_bytes(seq, pack._causal), pack._ints(offsets), max_len


def get_full_only_seq_padded(pack):
    """(full stream, offsets, max_len), as get_causal_seq_padded."""
    seq, offsets, max_len = _call(_core.get_full_only_seq_padded, {}, pack._p)
    return from_bytes(seq, pack._full), pack._ints(offsets), max_len


def has_pad_segment(pack):
    return _core.has_pad_segment(pack._p)


def get_all_seq(pack):
    """The real rows in packed order [num_tokens, ...]; ShardedPack on a shard."""
    return from_bytes(_call(_core.get_all_seq, {}, pack._p), pack._causal)


def get_all_seq_padded(pack):
    """(interleaved stream, sample offsets, max_len) for the two-way dense pass."""
    seq, offsets, max_len = _call(_core.get_all_seq_padded, {}, pack._p)
    return from_bytes(seq, pack._causal), pack._ints(offsets), max_len


def set_all_seq(pack, value):
    """Overwrites both streams' real rows from `value` in packed order."""
    u8, _ = to_bytes(value, "value")
    _call(_core.set_all_seq, {"value": tuple(getattr(value, "shape", ()))}, pack._p, u8)


def from_mode_splits(causal_seq, full_only_seq, source, is_sharded=None):
    """A pack with `source`'s metadata around two given streams."""
    c, cf = to_bytes(causal_seq, "causal_seq")
    f, ff = to_bytes(full_only_seq, "full_only_seq")
    return _wrap(_call(_core.from_mode_splits, {}, c, f, source._p, is_sharded), cf, ff)


def from_und_gen_splits(und_seq, gen_seq, source):
    """As from_mode_splits: und is the causal stream, gen the full one."""
    u, uf = to_bytes(und_seq, "und_seq")
    g, gf = to_bytes(gen_seq, "gen_seq")
    return _wrap(_call(_core.from_und_gen_splits, {}, u, g, source._p), uf, gf)


def zeros_like(source, shape=None):
    """Zero streams of `source`'s lengths; `shape` (the original's (-1, ...))
    changes the row shape, keeping the dtype."""
    if shape is None:
        return _wrap(_core.zeros_like(source._p), source._causal, source._full)
    trailing = tuple(int(v) for v in shape)[1:]
    if any(v < 0 for v in trailing):
        raise errors.InvalidArgument("invalid_argument: shape: expected (-1, ...) with sizes >= 0, got %s" % (shape,),
                                     "shape", "expected (-1, ...) with sizes >= 0", shape)
    fmt = source._causal.with_trailing(trailing)
    return _wrap(_call(_core.zeros_like, {"row_bytes": fmt.row_bytes}, source._p, fmt.row_bytes), fmt,
                 source._full.with_trailing(trailing))


def from_all_seq(packed, source):
    """Streams zero-padded to `source`'s lengths from rows in packed order."""
    u8, fmt = to_bytes(packed, "packed")
    return _wrap(_call(_core.from_all_seq, {"packed": u8.shape[0]}, u8, source._p), fmt)


def get_num_real_tokens(pack):
    """(causal, full) real rows; the local counts of a shard."""
    return _core.get_num_real_tokens(pack._p)


def num_local_real_tokens(num_real, rank, shard_len):
    """Real rows in rank `rank`'s shard of `shard_len` rows of a stream with `num_real` real rows."""
    return _call(_core.num_local_real_tokens, {"num_real": num_real, "rank": rank, "shard_len": shard_len},
                 int(num_real), int(rank), int(shard_len))


def get_padding_stats(marks):
    """The marks as the original's get_padding_stats names them."""
    return {"MAX_CAUSAL_LEN_IMAGE_BATCH": marks.image_causal, "MAX_FULL_LEN_IMAGE_BATCH": marks.image_full,
            "MAX_CAUSAL_LEN_VIDEO_BATCH": marks.video_causal, "MAX_FULL_LEN_VIDEO_BATCH": marks.video_full}


def _position_ids(fn, ids, pack):
    a, kind = ids_in(ids, "position_ids")
    return ints_out(_call(fn, {"position_ids.len": a.shape[-1] if a.ndim else None}, a, pack._p), kind)


def get_und_position_ids(position_ids, pack):
    """The causal rows' ids along the last axis ([len] or [axes, len], int64)."""
    return _position_ids(_core.get_und_position_ids, position_ids, pack)


def get_gen_position_ids(position_ids, pack):
    """The full rows' ids along the last axis."""
    return _position_ids(_core.get_gen_position_ids, position_ids, pack)


def shard_pack(pack, rank, world_size):
    """Rank `rank`'s contiguous shard of each padded stream (context parallel)."""
    ctx = {"rank": rank, "cp_world_size": world_size, "world_size": world_size}
    return _wrap(_call(_core.shard_pack, ctx, pack._p, int(rank), int(world_size)), pack._causal, pack._full)


def shard_pack_all(pack, world_size):
    """Every rank's shard, in rank order."""
    ctx = {"cp_world_size": world_size, "world_size": world_size}
    return [_wrap(s, pack._causal, pack._full) for s in _call(_core.shard_pack_all, ctx, pack._p, int(world_size))]


def gather_shards(shards):
    """The unsharded pack of all ranks' shards (rank order)."""
    shards = list(shards)
    if not shards:
        return _call(_core.gather_shards, {}, [])
    return _wrap(_call(_core.gather_shards, {}, [s._p for s in shards]), shards[0]._causal, shards[0]._full)


def shard_position_ids(position_ids, pack, rank, world_size):
    """Rank `rank`'s position ids: [causal shard ; full shard] along the last axis."""
    a, kind = ids_in(position_ids, "position_ids")
    ctx = {"rank": rank, "cp_world_size": world_size, "world_size": world_size}
    return ints_out(_call(_core.shard_position_ids, ctx, a, pack._p, int(rank), int(world_size)), kind)
