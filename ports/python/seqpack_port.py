#!/usr/bin/env python3
"""Conformance port (seqpack-conformance/1) for any Python module that
implements the SequencePack runtime API of the original module.

Usage: seqpack_port.py MODULE
  MODULE is an importable module name (e.g. cosmos_framework....runtime) or a
  file path. A file whose first line is a bare path (as the spec file carries)
  has that line dropped before it is compiled.

What the adapter does, and nothing more (no SequencePack logic of its own):
  - stubs `cosmos_framework.utils.log` when the framework is not installed;
  - sets the module's CUDA-graph globals from the case before each call and
    reads them back after it;
  - on torch < 2.0, which cannot index with int32 tensors, casts the index
    tensors the module builds to int64 (values unchanged);
  - builds the packed sequence as one int64 column, row r holding r + 1;
  - maps the module's exceptions to protocol error classes by their messages;
    anything else is reported as `unclassified` with the exception text;
  - refuses cases that would allocate more than 2^24 rows (`adapter_limit`),
    since the original would try to allocate them.
"""
import json
import math
import sys
import types

LIMIT = 1 << 24


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
            lines = lines[1:]
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


GLOBALS = (("image", 0, "MAX_CAUSAL_LEN_IMAGE_BATCH"), ("image", 1, "MAX_FULL_LEN_IMAGE_BATCH"),
           ("video", 0, "MAX_CAUSAL_LEN_VIDEO_BATCH"), ("video", 1, "MAX_FULL_LEN_VIDEO_BATCH"))


def classify(exc):
    text = str(exc)
    if "non_causal_text_idxs should be empty" in text:
        return "und_token_in_full_split"
    if "sum(sample_lens) must be equal" in text:
        return "length_mismatch"
    if "one full split per sample" in text:
        return "pad_segment_pairing"
    if "does not match the current packed-sequence layout" in text:
        return "metadata_mismatch"
    return "unclassified"


def ints(t):
    return [int(v) for v in t.tolist()]


def rows_of(t):
    return [int(v) - 1 for v in t[:, 0].tolist()] if t.shape[0] else []


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


def answer(mod, torch, req):
    cid = req.get("id", "")
    layout = req["layout"]
    opts = req.get("options", {})
    bounds = req.get("graph_bounds") or {"image": [0, 0], "video": [0, 0]}
    rows = int(req["rows"])
    big = [rows] + stream_bounds(layout, opts)
    big += [abs(int(v)) for kind in ("image", "video") for v in bounds[kind]]
    if max(big) > LIMIT or sum(abs(int(v)) for v in layout["sample_lens"]) > LIMIT:
        return {"type": "result", "id": cid, "ok": False, "error": "adapter_limit",
                "message": "the case would allocate more than %d rows" % LIMIT}
    for kind, i, name in GLOBALS:
        setattr(mod, name, int(bounds[kind][i]))
    packed = torch.arange(1, rows + 1, dtype=torch.int64).unsqueeze(1)
    und = torch.tensor(layout["und_token_indexes"], dtype=torch.int64)
    try:
        pack = mod.sequence_pack_from_packed_sequence(
            packed, list(layout["attn_modes"]), list(layout["split_lens"]), list(layout["sample_lens"]), und,
            torch.zeros(0, dtype=torch.int64),
            is_image_batch=bool(opts.get("is_image_batch", False)),
            cp_world_size=int(opts.get("cp_world_size", 1)),
            pad_for_cuda_graphs=bool(opts.get("pad_for_cuda_graphs", False)),
            full_seq_alignment=int(opts.get("full_seq_alignment", 1)),
            causal_seq_alignment=int(opts.get("causal_seq_alignment", 1)),
            pad_segment_only_when_padded=bool(opts.get("pad_segment_only_when_padded", False)))
        result = {
            "sample_offsets": ints(pack["sample_offsets"]),
            "max_sample_len": int(pack["max_sample_len"]),
            "max_causal_len": int(pack["max_causal_len"]),
            "max_full_len": int(pack["max_full_len"]),
            "max_num_tokens": int(pack["max_num_tokens"]),
            "causal_indices": ints(pack["_causal_indices"]),
            "full_indices": ints(pack["_full_indices"]),
            "causal_seq_offsets": ints(pack["_causal_seq_offsets"]),
            "full_only_seq_offsets": ints(pack["_full_only_seq_offsets"]),
            "num_causal_tokens": int(pack["_num_causal_tokens"]),
            "num_full_tokens": int(pack["_num_full_tokens"]),
            "causal_sample_ids": ints(pack["_causal_sample_ids"]),
            "full_only_sample_ids": ints(pack["_full_only_sample_ids"]),
            "causal_rows": rows_of(pack["causal_seq"]),
            "full_only_rows": rows_of(pack["full_only_seq"]),
            "pad_segment": None,
        }
        if mod.has_pad_segment(pack):
            result["pad_segment"] = {
                "causal_seq_offsets": ints(pack["_causal_seq_offsets_pad_segment"]),
                "max_causal_len": int(pack["max_causal_len_pad_segment"]),
                "full_only_seq_offsets": ints(pack["_full_only_seq_offsets_pad_segment"]),
                "max_full_len": int(pack["max_full_len_pad_segment"]),
                "sample_offsets": ints(pack["_sample_offsets_pad_segment"]),
                "max_sample_len": int(pack["max_sample_len_pad_segment"]),
            }
        seq, offsets, max_len = mod.get_all_seq_padded(pack)
        views = {"all_seq_padded": {"rows": rows_of(seq), "offsets": ints(offsets), "max_len": int(max_len)}}
    except Exception as exc:  # the module's own checks, mapped to classes
        return {"type": "result", "id": cid, "ok": False, "error": classify(exc),
                "message": "%s: %s" % (type(exc).__name__, exc)}
    marks = {kind: [0, 0] for kind in ("image", "video")}
    for kind, i, name in GLOBALS:
        marks[kind][i] = int(getattr(mod, name))
    return {"type": "result", "id": cid, "ok": True, "pack": result, "graph_bounds": marks, "views": views}


def main():
    if len(sys.argv) != 2:
        sys.stderr.write("usage: seqpack_port.py MODULE\n")
        return 2
    import torch
    mod = load(sys.argv[1])
    patch_int32_indexing(mod, torch)
    out = sys.stdout
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            req = json.loads(line)
        except ValueError as exc:
            out.write(json.dumps({"type": "result", "id": "", "ok": False, "error": "bad_request",
                                  "message": str(exc)}) + "\n")
            out.flush()
            continue
        if req.get("type") == "hello":
            reply = {"type": "hello", "protocol": "seqpack-conformance/1",
                     "name": "python:" + getattr(mod, "__name__", sys.argv[1]), "views": ["all_seq_padded"]}
        else:
            try:
                reply = answer(mod, torch, req)
            except (KeyError, TypeError, ValueError) as exc:
                reply = {"type": "result", "id": req.get("id", ""), "ok": False, "error": "bad_request",
                         "message": "%s: %s" % (type(exc).__name__, exc)}
        out.write(json.dumps(reply) + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
