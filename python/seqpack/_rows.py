"""Rows across the extension: any NumPy array or CPU torch tensor of shape
[rows, ...] becomes a uint8 array [rows, row_bytes] (its bytes, never its
values: NaN payloads, -0.0, bfloat16 and bool all cross unchanged), and comes
back as the same kind of array, dtype and trailing shape."""
import math

import numpy as np

from . import errors

_INT_OF_SIZE = {1: np.uint8, 2: np.int16, 4: np.int32, 8: np.int64}


def _torch():
    import sys
    return sys.modules.get("torch")


class Format:
    """How a buffer of rows is shown to the caller: 'numpy' or 'torch', the
    dtype, and the shape of one row."""

    __slots__ = ("kind", "dtype", "trailing", "itemsize")

    def __init__(self, kind, dtype, trailing, itemsize):
        self.kind, self.dtype, self.trailing, self.itemsize = kind, dtype, tuple(trailing), itemsize

    @property
    def row_bytes(self):
        return self.itemsize * math.prod(self.trailing)

    def with_trailing(self, trailing):
        return Format(self.kind, self.dtype, trailing, self.itemsize)

    def __eq__(self, other):
        return isinstance(other, Format) and (self.kind, self.dtype, self.trailing) == (
            other.kind, other.dtype, other.trailing)

    def __repr__(self):
        return "Format(%s, %s, %s)" % (self.kind, self.dtype, self.trailing)


def _is_tensor(x):
    torch = _torch()
    return torch is not None and isinstance(x, torch.Tensor)


def to_bytes(x, field):
    """(uint8 array [rows, row_bytes], Format) of an array or tensor."""
    if _is_tensor(x):
        torch = _torch()
        if x.device.type != "cpu":
            raise errors.InvalidArgument("invalid_argument: %s: expected a CPU tensor, got device %s" % (field, x.device),
                                         field, "expected a CPU tensor", str(x.device))
        if x.dim() < 1:
            raise errors.InvalidArgument("invalid_argument: %s: expected a tensor of rows, got a 0-d tensor" % field,
                                         field, "expected a tensor of rows", tuple(x.shape))
        if x.is_quantized or x.is_sparse:
            raise errors.InvalidArgument("invalid_argument: %s: dtype %s is not a dense dtype" % (field, x.dtype),
                                         field, "not a dense dtype", str(x.dtype))
        fmt = Format("torch", x.dtype, x.shape[1:], x.element_size())
        t = x.detach().contiguous()
        if t.is_complex():
            t = torch.view_as_real(t)
        size = t.element_size()
        t = t.view(torch.uint8 if size == 1 else {2: torch.int16, 4: torch.int32, 8: torch.int64}[size])
        flat = t.numpy().reshape(-1).view(np.uint8)
        return flat.reshape(x.shape[0], fmt.row_bytes), fmt
    a = np.asarray(x)
    if a.ndim < 1:
        raise errors.InvalidArgument("invalid_argument: %s: expected an array of rows, got a 0-d array" % field,
                                     field, "expected an array of rows", a.shape)
    if a.dtype.hasobject:
        raise errors.InvalidArgument("invalid_argument: %s: dtype %s holds Python objects, not bytes" % (field, a.dtype),
                                     field, "holds Python objects", str(a.dtype))
    fmt = Format("numpy", a.dtype, a.shape[1:], a.dtype.itemsize)
    flat = np.ascontiguousarray(a).reshape(-1).view(np.uint8)
    return flat.reshape(a.shape[0], fmt.row_bytes), fmt


def from_bytes(u8, fmt):
    """The caller's array of a uint8 array [rows, row_bytes] in Format `fmt`."""
    rows = u8.shape[0]
    if u8.shape[1] != fmt.row_bytes:  # a width the caller's format does not hold: plain bytes
        fmt = Format(fmt.kind, np.uint8 if fmt.kind == "numpy" else _torch().uint8, (u8.shape[1],), 1)
    flat = np.ascontiguousarray(u8).reshape(-1)
    if fmt.kind == "numpy":
        return flat.view(fmt.dtype).reshape((rows,) + fmt.trailing)
    torch = _torch()
    if fmt.dtype.is_complex:
        real = {torch.complex64: torch.float32, torch.complex128: torch.float64, torch.complex32: torch.float16}[fmt.dtype]
        size = fmt.itemsize // 2
        t = torch.from_numpy(flat.view(_INT_OF_SIZE[size]).copy()).view(real)
        return torch.view_as_complex(t.reshape(-1, 2)).reshape((rows,) + fmt.trailing)
    t = torch.from_numpy(flat.view(_INT_OF_SIZE[fmt.itemsize]).copy())
    return t.view(fmt.dtype).reshape((rows,) + fmt.trailing)


def ints_out(a, like):
    """An int array (sample ids, offsets, position ids) as `like`'s kind."""
    if like is not None and like.kind == "torch":
        return _torch().from_numpy(np.ascontiguousarray(a))
    return a


def ids_in(x, field):
    """Position ids (1-D or 2-D integers) as an int64 array, and the caller's kind."""
    if _is_tensor(x):
        return x.detach().cpu().to(_torch().int64).numpy(), Format("torch", None, (), 8)
    a = np.asarray(x)
    if a.dtype.kind not in "iu":
        raise errors.InvalidArgument("invalid_argument: %s: expected integers, got dtype %s" % (field, a.dtype), field,
                                     "expected integers", str(a.dtype))
    return a.astype(np.int64, copy=False), Format("numpy", None, (), 8)
