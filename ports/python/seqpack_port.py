#!/usr/bin/env python3
"""Conformance port (seqpack-conformance/1, protocol/PROTOCOL.md) for any
Python module that implements the SequencePack runtime API of the original.

Usage: seqpack_port.py MODULE
  MODULE is an importable module name (e.g. cosmos_framework....runtime) or a
  file path. A file whose first line is a bare path (as the spec file carries)
  has that line dropped before it is compiled.

Every number and row of an answer comes from the module's own functions:
the build (`sequence_pack_from_packed_sequence`, with `prepared_metadata`
from `prepare_sequence_pack_metadata` for `metadata_reuse`), its getters,
setters, `from_*`, `zeros_like`, position ids, `get_num_real_tokens`,
`num_local_real_tokens` and `get_padding_stats`.

What the hello declares (the port's features, PROTOCOL.md "Features"), so
that an older revision of the original is judged on the semantics it has:
  - `options`: the case options the build accepts, read from the signature
    of `sequence_pack_from_packed_sequence`; `cp_world_size` is one of them
    (the build pads for it; the sharding is the `cp_shards` view's);
  - `views`: a view only when the module has every function it needs
    (VIEW_NEEDS) and its packs carry every private field the adapter reads
    for it (VIEW_FIELDS), seen on one pack of two rows built at start-up.
A pack field the `pack` result reads (PACK_FIELDS, PAD_SEGMENT_FIELDS) that a
pack lacks is left out of the answer, so the runner names it (`pack.X:
missing in the port's result`) as the difference it is.

What the adapter does of its own, and nothing more:
  - stubs `cosmos_framework.utils.log` when the framework is not installed;
  - sets the module's CUDA-graph globals before a case (a session's first
    case only) and reads them back with `get_padding_stats` (or the globals);
  - passes an option to the build only when the case sets it away from the
    original's default, so a revision without an option is judged on what it
    computes; a case that needs an option the target lacks (the runner sends
    none: the hello does not declare it) is answered with the class
    `unsupported_option`, naming it;
  - on torch < 2.0, which cannot index with int32 tensors, casts the index
    tensors the module builds to int64 (values unchanged);
  - makes the inputs: the packed sequence as one int64 column, row r holding
    r + 1; the foreign sources and position ids of PROTOCOL.md ("Views"); the
    float64 payload rows;
  - CP sharding (`cp_shards`, `cp_local`), which is the framework's and not
    the module's (NOTES.md section 8): the adapter slices the padded streams
    and sample ids into contiguous shards, makes each local pack with the
    module's `from_mode_splits(..., is_sharded=True)`, and records the local
    counts from the module's `num_local_real_tokens` under the keys the
    module's `get_num_real_tokens` reads; a world size that does not divide a
    padded stream is answered `not_divisible`;
  - maps the module's exceptions to protocol error classes by their messages;
    anything else is reported as `unclassified` with the exception text;
  - refuses cases that would allocate more than 2^24 rows (`adapter_limit`),
    since the original would try to allocate them, and, on torch < 2.0,
    negative sample lengths (`adapter_limit`): torch 1.13's repeat_interleave
    with output_size, as the module calls it, writes out of bounds on them
    and corrupts the process's heap (later answers could be wrong, not just
    that one lost).
"""
import base64
import inspect
import json
import math
import sys
import types

LIMIT = 1 << 24
SOURCE = 1 << 26  # foreign source s, row k, holds s * SOURCE + k + 1

# The build's options: protocol name, the original's default, type.
OPTIONS = (("is_image_batch", False, bool), ("cp_world_size", 1, int), ("pad_for_cuda_graphs", False, bool),
           ("full_seq_alignment", 1, int), ("causal_seq_alignment", 1, int),
           ("pad_segment_only_when_padded", False, bool))

GLOBALS = (("image", 0, "MAX_CAUSAL_LEN_IMAGE_BATCH"), ("image", 1, "MAX_FULL_LEN_IMAGE_BATCH"),
           ("video", 0, "MAX_CAUSAL_LEN_VIDEO_BATCH"), ("video", 1, "MAX_FULL_LEN_VIDEO_BATCH"))

# What each view needs of the module, beyond the build.
VIEW_NEEDS = {
    "all_seq_padded": ("get_all_seq_padded",),
    "cp_shards": ("from_mode_splits", "num_local_real_tokens", "get_num_real_tokens"),
    "getters": ("get_und_seq", "get_gen_seq", "get_all_seq", "get_causal_seq_padded", "get_full_only_seq_padded",
                "has_pad_segment", "get_num_real_tokens"),
    "position_ids": ("get_und_position_ids", "get_gen_position_ids"),
    "setters": ("set_und_seq", "set_gen_seq", "set_all_seq", "get_all_seq", "get_num_real_tokens"),
    "derived": ("from_all_seq", "from_mode_splits", "from_und_gen_splits", "zeros_like", "get_all_seq",
                "get_num_real_tokens"),
    "cp_local": ("from_mode_splits", "num_local_real_tokens", "get_num_real_tokens", "from_all_seq", "get_all_seq",
                 "get_all_seq_padded", "get_und_position_ids", "get_gen_position_ids", "get_causal_seq_padded",
                 "get_full_only_seq_padded"),
    "metadata_reuse": ("prepare_sequence_pack_metadata", "get_all_seq", "get_num_real_tokens"),
    "payload": ("get_all_seq_padded",),
    "dtypes": (),
}

# The private pack fields the adapter itself reads for a view (the module's
# functions read theirs: a KeyError there is the module's, shown in the view).
VIEW_FIELDS = {
    "cp_local": ("_causal_sample_ids", "_full_only_sample_ids"),
}

# The `pack` result of PROTOCOL.md: protocol name, the pack's key, how it is
# written ("ints": an integer array, "int": one integer, "rows": row names).
PACK_FIELDS = (
    ("sample_offsets", "sample_offsets", "ints"), ("max_sample_len", "max_sample_len", "int"),
    ("max_causal_len", "max_causal_len", "int"), ("max_full_len", "max_full_len", "int"),
    ("max_num_tokens", "max_num_tokens", "int"), ("causal_indices", "_causal_indices", "ints"),
    ("full_indices", "_full_indices", "ints"), ("causal_seq_offsets", "_causal_seq_offsets", "ints"),
    ("full_only_seq_offsets", "_full_only_seq_offsets", "ints"), ("num_causal_tokens", "_num_causal_tokens", "int"),
    ("num_full_tokens", "_num_full_tokens", "int"), ("causal_sample_ids", "_causal_sample_ids", "ints"),
    ("full_only_sample_ids", "_full_only_sample_ids", "ints"), ("causal_rows", "causal_seq", "rows"),
    ("full_only_rows", "full_only_seq", "rows"),
)
PAD_SEGMENT_FIELDS = (
    ("causal_seq_offsets", "_causal_seq_offsets_pad_segment", "ints"),
    ("max_causal_len", "max_causal_len_pad_segment", "int"),
    ("full_only_seq_offsets", "_full_only_seq_offsets_pad_segment", "ints"),
    ("max_full_len", "max_full_len_pad_segment", "int"),
    ("sample_offsets", "_sample_offsets_pad_segment", "ints"),
    ("max_sample_len", "max_sample_len_pad_segment", "int"),
)

# The module's messages (assertions and exceptions) and the class each means.
MESSAGES = (
    ("non_causal_text_idxs should be empty", "und_token_in_full_split"),
    ("sum(sample_lens) must be equal", "length_mismatch"),
    ("one full split per sample", "pad_segment_pairing"),
    ("does not match the current packed-sequence layout", "metadata_mismatch"),
    ("not supported in context parallel sharded mode", "sharded_pack"),
    ("describe the unsharded stream", "sharded_pack"),
)


class Refusal(Exception):
    """An answer the adapter gives itself, with its protocol class."""

    def __init__(self, cls, message):
        super().__init__(message)
        self.cls = cls


def load(spec):
    try:
        import cosmos_framework.utils  # noqa: F401
    except ImportError:
        log = types.SimpleNamespace(info=lambda *a, **k: None, warning=lambda *a, **k: None)
        for name in ("cosmos_framework", "cosmos_framework.utils"):
            sys.modules.setdefault(name, types.ModuleType(name))
        sys.modules["cosmos_framework.utils"].log = log
        sys.modules["cosmos_framework.utils.log"] = log
    if "/" in spec or spec.endswith((".py", ".txt")):
        with open(spec, encoding="utf-8") as f:
            lines = f.read().split("\n")
        first = lines[0].strip()
        if first and " " not in first and first.endswith(".py") and not first.startswith(("#", "import", "from")):
            lines[0] = ""  # keeps the line numbers of the file (coverage and tracebacks)
        module = types.ModuleType("seqpack_port_target")
        module.__file__ = spec
        sys.modules["seqpack_port_target"] = module
        exec(compile("\n".join(lines), spec, "exec"), module.__dict__)
        return module
    import importlib
    return importlib.import_module(spec)


def patch_int32_indexing(mod, torch):
    major = int(torch.__version__.split(".")[0])
    if major >= 2 or not hasattr(mod, "_compute_mode_indices_and_offsets"):
        return
    original = mod._compute_mode_indices_and_offsets

    def cast(*args, **kwargs):
        indices, offsets = original(*args, **kwargs)
        return indices.long(), offsets

    mod._compute_mode_indices_and_offsets = cast


def classify(exc):
    if isinstance(exc, Refusal):
        return exc.cls
    text = str(exc)
    for fragment, cls in MESSAGES:
        if fragment in text:
            return cls
    return "unclassified"


def error_of(exc):
    return {"error": classify(exc), "message": "%s: %s" % (type(exc).__name__, exc)}


def run_triples(a, np):
    """[first, count, step, ...] for the runs encoding of a 1-D int64 array:
    one run per maximal stretch of equal steps, the last element closing the
    last run."""
    n = a.shape[0]
    if n < 64:  # numpy's per-call cost exceeds the loop's
        v, out, i = a.tolist(), [], 0
        while i < n:
            step = v[i + 1] - v[i] if i + 1 < n else 0
            j = i + 1
            while j < n and v[j] - v[j - 1] == step:
                j += 1
            out += [v[i], j - i, step]
            i = j
        return out
    d = np.diff(a)
    starts = np.flatnonzero(np.concatenate(([True], d[1:] != d[:-1])))
    counts = np.append(starts[1:], n - 1) - starts
    counts[-1] += 1
    return np.stack([a[starts], counts, d[starts]], 1).ravel().tolist()


def stream_bounds(layout, opts):
    """An upper bound of each padded stream's rows: 0 for a stream that stays
    empty (0 pads to 0 under any alignment), else its tokens, the pad
    segment's row and one step of lcm(alignment, largest bucket, cp)."""
    tokens = {"causal": 0, "full": 0}
    splits = {"causal": 0, "full": 0}
    for mode, n in zip(layout["attn_modes"], layout["split_lens"]):
        if mode in tokens:
            tokens[mode] += abs(int(n))
            splits[mode] += 1
    reserve = 1 if splits["causal"] == splits["full"] > 0 else 0
    cp = max(abs(int(opts.get("cp_world_size", 1))), 1)
    out = []
    for mode, key in (("causal", "causal_seq_alignment"), ("full", "full_seq_alignment")):
        n = tokens[mode] + reserve
        step = math.lcm(max(abs(int(opts.get(key, 1))), 1), 2048, cp)
        out.append(0 if n == 0 else n + step)
    return out


class Port:
    def __init__(self, mod, torch):
        self.mod, self.torch = mod, torch
        import numpy
        self.np = numpy
        build = mod.sequence_pack_from_packed_sequence
        params = inspect.signature(build).parameters
        self.params = set(params)
        self.any_keyword = any(p.kind == inspect.Parameter.VAR_KEYWORD for p in params.values())
        self.options = [name for name, _, _ in OPTIONS if self.accepts(name)]
        keys = self.pack_keys()
        self.views = [v for v, needs in VIEW_NEEDS.items() if all(hasattr(mod, f) for f in needs)
                      and (keys is None or all(k in keys for k in VIEW_FIELDS.get(v, ())))]
        if "metadata_reuse" in self.views and not self.accepts("prepared_metadata"):
            self.views.remove("metadata_reuse")
        self.behaviours = ["error_marks", "session"]
        self.runs = False
        self.old_torch = int(torch.__version__.split(".")[0]) < 2

    # --- integer arrays, in the encoding the hello chose ----------------------

    def encode(self, a):
        """A 1-D numpy integer array as the protocol's integer array."""
        if self.runs:
            return {"runs": run_triples(a.astype(self.np.int64, copy=False), self.np)}
        return a.tolist()

    def ints(self, t):
        """A 1-D integer tensor (or a 0-D one, as a list of one)."""
        return self.encode(t.numpy().reshape(-1))

    def rows(self, t):
        """The name of each row of a self-naming buffer (its value - 1; -1 for padding)."""
        return self.encode(t.numpy()[:, 0] - 1)

    def accepts(self, name):
        return self.any_keyword or name in self.params

    def pack_keys(self):
        """The keys of one pack the module builds at its defaults (one sample
        of a causal and a full row, the smallest layout with a pad segment),
        or None when that build fails (every view's fields are then assumed,
        and the cases show the failure)."""
        torch = self.torch
        saved = self.marks(use_stats=False) if all(hasattr(self.mod, g) for _, _, g in GLOBALS) else None
        try:
            pack = self.mod.sequence_pack_from_packed_sequence(
                torch.arange(1, 3, dtype=torch.int64).unsqueeze(1), ["causal", "full"], [1, 1], [2],
                torch.tensor([0], dtype=torch.int64), torch.zeros(0, dtype=torch.int64))
            return set(pack)
        except Exception:  # noqa: BLE001 (a module that cannot build this pack fails every case instead)
            return None
        finally:
            if saved is not None:
                self.set_marks(saved)

    # --- marks ---------------------------------------------------------------

    def set_marks(self, bounds):
        for kind, i, name in GLOBALS:
            setattr(self.mod, name, int(bounds[kind][i]))

    def marks(self, use_stats=True):
        """The marks as the module's get_padding_stats reports them (the
        globals themselves when it has none, or with use_stats=False)."""
        read = (lambda name: getattr(self.mod, name))
        if use_stats and hasattr(self.mod, "get_padding_stats"):
            stats = self.mod.get_padding_stats()
            read = stats.__getitem__
        out = {"image": [0, 0], "video": [0, 0]}
        for kind, i, name in GLOBALS:
            out[kind][i] = int(read(name))
        return out

    # --- inputs --------------------------------------------------------------

    def source(self, s, n, dtype=None):
        """Foreign source s: n rows, one column, row k holding s * 2^26 + k + 1."""
        return self.torch.arange(s * SOURCE + 1, s * SOURCE + n + 1, dtype=dtype or self.torch.int64).unsqueeze(1)

    def payload_rows(self, n):
        np = self.np
        t = np.arange(n, dtype=np.uint64)
        bits = np.select([t % 5 == 0, t % 5 == 1, t % 5 == 2, t % 5 == 3],
                         [np.uint64(0x7FF8000000000000) + t + np.uint64(1), np.full_like(t, 0x8000000000000000),
                          t + np.uint64(1), np.uint64(0xFFF0000000000000) + t + np.uint64(1)],
                         np.uint64(0x3FF0000000000000) + t + np.uint64(1))
        return self.torch.from_numpy(bits.view(np.int64).copy()).view(self.torch.float64).unsqueeze(1)

    def kwargs(self, opts):
        out = {}
        for name, default, kind in OPTIONS:
            value = kind(opts.get(name, default))
            if value == default:
                continue
            if not self.accepts(name):
                raise Refusal("unsupported_option", "the target's sequence_pack_from_packed_sequence has no option "
                              "%s, which this case sets to %s" % (name, json.dumps(value)))
            out[name] = value
        return out

    def build(self, packed, layout, und, kwargs, sample_lens=None, prepared=None):
        extra = dict(kwargs)
        if prepared is not None:
            extra["prepared_metadata"] = prepared
        return self.mod.sequence_pack_from_packed_sequence(
            packed, list(layout["attn_modes"]), list(layout["split_lens"]),
            list(sample_lens if sample_lens is not None else layout["sample_lens"]), und,
            self.torch.zeros(0, dtype=self.torch.int64), **extra)

    # --- summaries -----------------------------------------------------------

    def summary(self, pack):
        """S(pack) of PROTOCOL.md: rows of both streams, the real counts, and
        get_all_seq's rows unless the module refuses it (a sharded pack)."""
        m = self.mod
        out = {"causal_rows": self.rows(pack["causal_seq"]), "full_only_rows": self.rows(pack["full_only_seq"]),
               "num_real_tokens": [int(v) for v in m.get_num_real_tokens(pack)]}
        try:
            out["all_seq_rows"] = self.rows(m.get_all_seq(pack))
        except Exception as exc:  # noqa: BLE001 (a sharded pack, or a fault: shown as a missing field)
            if classify(exc) != "sharded_pack":
                out["all_seq_error"] = error_of(exc)
        return out

    def zeros_summary(self, pack):
        """Z of PROTOCOL.md. Both streams have the pack's row shape; streams
        that disagree get a columns text naming both, which no expectation holds."""
        c, f = pack["causal_seq"], pack["full_only_seq"]
        nonzero = sum(int(self.np.count_nonzero(t.contiguous().numpy().view(self.np.uint8))) for t in (c, f))
        columns = int(math.prod(c.shape[1:]))
        if tuple(c.shape[1:]) != tuple(f.shape[1:]) or c.dtype != f.dtype:
            columns = "causal %s %s, full_only %s %s" % (tuple(c.shape[1:]), c.dtype, tuple(f.shape[1:]), f.dtype)
        return {"causal_len": int(c.shape[0]), "full_only_len": int(f.shape[0]), "columns": columns,
                "nonzero": nonzero}

    def padded_view(self, triple):
        seq, offsets, max_len = triple
        return {"rows": self.rows(seq), "offsets": self.ints(offsets), "max_len": int(max_len)}

    def refusal(self, call):
        try:
            call()
        except Exception as exc:  # noqa: BLE001
            return classify(exc)
        return "ok"

    # --- the case and its views ---------------------------------------------

    def fields(self, pack, table):
        """The fields of `table` the pack has, written as the protocol has
        them; one the pack lacks is left out, for the runner to name."""
        write = {"ints": self.ints, "int": int, "rows": self.rows}
        return {name: write[kind](pack[key]) for name, key, kind in table if key in pack}

    def pack_fields(self, pack):
        result = self.fields(pack, PACK_FIELDS)
        has = self.mod.has_pad_segment(pack) if hasattr(self.mod, "has_pad_segment") \
            else "_causal_seq_offsets_pad_segment" in pack
        result["pad_segment"] = self.fields(pack, PAD_SEGMENT_FIELDS) if has else None
        return result

    def shards(self, pack, world):
        """The adapter's CP sharding (NOTES.md section 8): contiguous slices of
        the padded streams and sample ids, made a local pack by the module's
        from_mode_splits(is_sharded=True), with the module's local counts.
        None when a padded stream does not divide by `world`."""
        m = self.mod
        lc, lf = int(pack["causal_seq"].shape[0]), int(pack["full_only_seq"].shape[0])
        if lc % world or lf % world:
            return None
        sc, sf = lc // world, lf // world
        real_c, real_f = m.get_num_real_tokens(pack)
        out = []
        for r in range(world):
            local = m.from_mode_splits(pack["causal_seq"][r * sc:(r + 1) * sc],
                                       pack["full_only_seq"][r * sf:(r + 1) * sf], pack, is_sharded=True)
            for key, n in (("_causal_sample_ids", sc), ("_full_only_sample_ids", sf)):
                if key in pack:  # read by cp_local only (VIEW_FIELDS)
                    local[key] = pack[key][r * n:(r + 1) * n]
            local["_num_causal_tokens_local"] = m.num_local_real_tokens(real_c, r, sc)
            local["_num_full_tokens_local"] = m.num_local_real_tokens(real_f, r, sf)
            out.append(local)
        return out

    def view(self, name, pack, ctx):
        m, torch = self.mod, self.torch
        if name == "all_seq_padded":
            return self.padded_view(m.get_all_seq_padded(pack))
        if name == "cp_shards":
            world = int(ctx["opts"].get("cp_world_size", 1))
            if world <= 1:
                return None
            locals_ = self.shards(pack, world)
            if locals_ is None:
                return {"error": "not_divisible"}
            out = []
            for r, local in enumerate(locals_):
                nc, nf = m.get_num_real_tokens(local)
                out.append({"rank": r, "causal_rows": self.rows(local["causal_seq"]),
                            "full_only_rows": self.rows(local["full_only_seq"]),
                            "num_causal_tokens_local": int(nc), "num_full_tokens_local": int(nf)})
            return out
        if name == "dtypes":
            # The dtype of the offsets and sample ids, as the module made them
            # (indices are left out: this adapter widens them for torch 1.13).
            out = {name: str(pack[key].dtype).replace("torch.", "") for name, key, kind in PACK_FIELDS
                   if kind == "ints" and key in pack and "indices" not in name}
            if "_causal_seq_offsets_pad_segment" in pack:
                out.update({"pad_segment." + name: str(pack[key].dtype).replace("torch.", "")
                            for name, key, kind in PAD_SEGMENT_FIELDS if kind == "ints" and key in pack})
            return out
        if name == "getters":
            return {"und_rows": self.rows(m.get_und_seq(pack)), "gen_rows": self.rows(m.get_gen_seq(pack)),
                    "all_seq_rows": self.rows(m.get_all_seq(pack)),
                    "causal_padded": self.padded_view(m.get_causal_seq_padded(pack)),
                    "full_only_padded": self.padded_view(m.get_full_only_seq_padded(pack)),
                    "has_pad_segment": bool(m.has_pad_segment(pack)),
                    "num_real_tokens": [int(v) for v in m.get_num_real_tokens(pack)]}
        if name == "position_ids":
            n = ctx["rows"]
            ids = torch.arange(n, dtype=torch.int64)
            ids3 = torch.stack([ids + a * SOURCE for a in range(3)])
            und3, gen3 = m.get_und_position_ids(ids3, pack), m.get_gen_position_ids(ids3, pack)
            return {"und": self.ints(m.get_und_position_ids(ids, pack)),
                    "gen": self.ints(m.get_gen_position_ids(ids, pack)),
                    "und_3d": [self.ints(row) for row in und3], "gen_3d": [self.ints(row) for row in gen3]}
        if name == "setters":
            p = dict(pack, causal_seq=pack["causal_seq"].clone(), full_only_seq=pack["full_only_seq"].clone())
            m.set_und_seq(p, self.source(1, int(pack["causal_seq"].shape[0])))
            m.set_gen_seq(p, self.source(2, int(pack["full_only_seq"].shape[0])))
            out = {"after_set_und_gen": self.summary(p)}
            m.set_all_seq(p, self.source(3, ctx["rows"]))
            out["after_set_all"] = self.summary(p)
            return out
        if name == "derived":
            und = self.source(5, int(pack["causal_seq"].shape[0]))
            gen = self.source(6, int(pack["full_only_seq"].shape[0]))
            return {"from_all_seq": self.summary(m.from_all_seq(self.source(4, ctx["rows"]), pack)),
                    "from_mode_splits": self.summary(m.from_mode_splits(und, gen, pack)),
                    "from_und_gen_splits": self.summary(m.from_und_gen_splits(und, gen, pack)),
                    "zeros_like": self.zeros_summary(m.zeros_like(pack)),
                    "zeros_like_shaped": self.zeros_summary(m.zeros_like(pack, shape=(-1, 3)))}
        if name == "cp_local":
            out = []
            ids = torch.arange(ctx["rows"], dtype=torch.int64)
            for world in sorted({int(ctx["opts"].get("cp_world_size", 1)), 2, 3} - {1}):
                locals_ = self.shards(pack, world) if world > 1 else None
                if locals_ is None:
                    out.append({"world_size": world, "error": "not_divisible"})
                    continue
                entries = []
                for local in locals_:
                    e = self.summary(local)
                    e["causal_sample_ids"] = self.ints(local["_causal_sample_ids"])
                    e["full_only_sample_ids"] = self.ints(local["_full_only_sample_ids"])
                    n = int(local["causal_seq"].shape[0]) + int(local["full_only_seq"].shape[0])
                    e["from_all_seq"] = self.summary(m.from_all_seq(self.source(7, n), local))
                    e["refused"] = {
                        "all_seq": self.refusal(lambda: m.get_all_seq(local)),
                        "all_seq_padded": self.refusal(lambda: m.get_all_seq_padded(local)),
                        "position_ids": self.refusal(lambda: m.get_und_position_ids(ids, local)),
                        "gen_position_ids": self.refusal(lambda: m.get_gen_position_ids(ids, local)),
                        "causal_padded": self.refusal(lambda: m.get_causal_seq_padded(local)),
                        "full_only_padded": self.refusal(lambda: m.get_full_only_seq_padded(local)),
                    }
                    entries.append(e)
                out.append({"world_size": world, "shards": entries})
            return out
        if name == "metadata_reuse":
            layout = ctx["layout"]
            meta = m.prepare_sequence_pack_metadata(list(layout["sample_lens"]), list(layout["split_lens"]),
                                                    list(layout["attn_modes"]), ctx["und"], ctx["packed"].device)
            out = {"matching": self.summary(self.build(ctx["packed"], layout, ctx["und"], ctx["kwargs"],
                                                        prepared=meta))}
            try:
                self.build(ctx["packed"], layout, ctx["und"], ctx["kwargs"],
                           sample_lens=list(layout["sample_lens"]) + [0], prepared=meta)
                out["mismatching"] = "ok"
            except Exception as exc:  # noqa: BLE001
                out["mismatching"] = classify(exc)
            splits = list(layout["split_lens"])
            cut = next((i for i, n in enumerate(splits) if int(n) >= 2), None)
            if cut is not None:  # the first split of 2+ rows cut into 1 and the rest, same mode
                other = dict(layout)
                other["split_lens"] = splits[:cut] + [1, int(splits[cut]) - 1] + splits[cut + 1:]
                modes = list(layout["attn_modes"])
                other["attn_modes"] = modes[:cut + 1] + [modes[cut]] + modes[cut + 1:]
                try:
                    self.build(ctx["packed"], other, ctx["und"], ctx["kwargs"], prepared=meta)
                    out["mismatching_splits"] = "ok"
                except Exception as exc:  # noqa: BLE001
                    out["mismatching_splits"] = classify(exc)
            # The und check is the preparation's: the build reusing `meta` with
            # the first row of the first non-empty full split listed as und.
            start = 0
            for mode, n in zip(layout["attn_modes"], splits):
                if mode == "full" and int(n) > 0:
                    und = self.torch.cat([ctx["und"], self.torch.tensor([start], dtype=self.torch.int64)])
                    try:
                        out["und_ignored"] = self.summary(self.build(ctx["packed"], layout, und, ctx["kwargs"],
                                                                     prepared=meta))
                    except Exception as exc:  # noqa: BLE001
                        out["und_ignored"] = classify(exc)
                    break
                start += int(n)
            return out
        if name == "payload":
            p = self.build(self.payload_rows(ctx["rows"]), ctx["layout"], ctx["und"], ctx["kwargs"])
            all_seq = m.get_all_seq_padded(p)[0]
            return {k: base64.b64encode(t.contiguous().numpy().tobytes()).decode("ascii")
                    for k, t in (("causal", p["causal_seq"]), ("full_only", p["full_only_seq"]),
                                 ("all_seq_padded", all_seq))}
        raise KeyError(name)

    def asked(self, req):
        """The declared views a request asks for: its "views", or all."""
        views = req.get("views")
        if not isinstance(views, list):
            return self.views
        return [v for v in self.views if v in views]

    def answer(self, req, first=True, views=None):
        """The result of one case; `first` is false for a session's later
        cases, which keep the marks the step before left; `views` are the
        views to compute (default: those the request asks for)."""
        cid = req.get("id", "")
        layout = req["layout"]
        opts = req.get("options") or {}
        bounds = req.get("graph_bounds") or {"image": [0, 0], "video": [0, 0]}
        rows = int(req["rows"])
        for key in ("sample_lens", "split_lens", "attn_modes", "und_token_indexes"):
            if not isinstance(layout[key], list):
                raise TypeError("layout.%s: expected a list" % key)
        if first:
            self.set_marks(bounds)
        try:
            kwargs = self.kwargs(opts)
            current = self.marks()
            big = [rows] + stream_bounds(layout, opts) + [abs(v) for kind in ("image", "video") for v in current[kind]]
            if max(big) > LIMIT or sum(abs(int(v)) for v in layout["sample_lens"]) > LIMIT:
                raise Refusal("adapter_limit", "the case would allocate more than %d rows" % LIMIT)
            if self.old_torch and any(int(v) < 0 for v in layout["sample_lens"]):
                raise Refusal("adapter_limit", "a negative sample length: torch < 2.0's repeat_interleave, called "
                              "with output_size as the module calls it, writes out of bounds on one (heap "
                              "corruption), so the adapter does not pass it")
            torch = self.torch
            packed = torch.arange(1, rows + 1, dtype=torch.int64).unsqueeze(1)
            und = torch.tensor(layout["und_token_indexes"], dtype=torch.int64)
            pack = self.build(packed, layout, und, kwargs)
            result = self.pack_fields(pack)
            after = self.marks()
        except Exception as exc:  # noqa: BLE001 (the module's own checks, mapped to classes)
            out = {"type": "result", "id": cid, "ok": False}
            out.update(error_of(exc))
            try:
                out["graph_bounds"] = self.marks()
            except Exception:  # noqa: BLE001 (get_padding_stats itself failed: the error above says so)
                out["graph_bounds"] = self.marks(use_stats=False)
            return out
        ctx = {"rows": rows, "opts": opts, "layout": layout, "und": und, "packed": packed, "kwargs": kwargs}
        out = {}
        for name in (self.asked(req) if views is None else views):
            try:
                v = self.view(name, pack, ctx)
            except Exception as exc:  # noqa: BLE001 (a fault in the module: the view shows it)
                v = error_of(exc)
            if v is not None:
                out[name] = v
            self.set_marks(after)  # the views' builds leave the marks as the case's build did
        return {"type": "result", "id": cid, "ok": True, "pack": result, "graph_bounds": after, "views": out}

    def handle(self, req):
        kind = req.get("type")
        if kind == "hello":
            self.runs = "runs" in (req.get("encodings") or [])
            reply = {"type": "hello", "protocol": "seqpack-conformance/1",
                    "name": "python:" + getattr(self.mod, "__name__", "module"),
                    "options": list(self.options), "views": self.views + self.behaviours}
            if self.runs:
                reply["encoding"] = "runs"
            return reply
        if kind == "case":
            return self.answer(req)
        if kind == "session":
            cases = req["cases"]
            if not isinstance(cases, list):
                raise TypeError("cases: expected a list")
            views = self.asked(req)
            return {"type": "session", "id": req.get("id", ""),
                    "results": [self.guarded(c, i == 0, views) for i, c in enumerate(cases)]}
        raise ValueError("type: unknown request type %s" % json.dumps(kind))

    def guarded(self, req, first, views):
        try:
            if not isinstance(req, dict):
                raise TypeError("a case must be an object")
            return self.answer(req, first, views)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            return bad_request(req.get("id", "") if isinstance(req, dict) else "", exc)


def bad_request(cid, exc):
    return {"type": "result", "id": cid, "ok": False, "error": "bad_request",
            "message": "%s: %s" % (type(exc).__name__, exc)}


def main():
    if len(sys.argv) != 2:
        sys.stderr.write("usage: seqpack_port.py MODULE\n")
        return 2
    import torch
    # One intra-op thread: the packs are small, and `seqpack conform --jobs N`
    # runs N adapters side by side, where torch's default (a thread per core,
    # each spinning while it waits for work) has them fight over the cores.
    torch.set_num_threads(1)
    mod = load(sys.argv[1])
    patch_int32_indexing(mod, torch)
    port = Port(mod, torch)
    out = sys.stdout
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            req = json.loads(line)
            if not isinstance(req, dict):
                raise TypeError("a request must be an object")
        except (ValueError, TypeError) as exc:
            reply = bad_request("", exc)
        else:
            try:
                reply = port.handle(req)
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                reply = bad_request(req.get("id", ""), exc)
        out.write(json.dumps(reply) + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
