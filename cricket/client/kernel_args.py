"""Pack Python values into a kernel's parameter buffer, laid out as the kernel's parameter ABI.

The layout (offset and size of each parameter) comes from the server's MODULE_GET_FUNCTION reply
(read from the cubin's ``.nv.info`` or the PTX ``.entry`` signature). Values map by size:
device buffers and pointers → 8-byte addresses; ``int`` → signed or unsigned integers of the
parameter's size; ``float`` → float32 for 4 bytes, float64 for 8, float16 for 2; NumPy scalars and
``bytes`` (structs passed by value) must have exactly the parameter's size. Where the image says
what a parameter holds (PTX types: the reply's ``kind``), a float given for an integer or pointer
is refused rather than reinterpreted, and an int given for a float parameter is converted.
"""
from __future__ import annotations

import struct
import sys
from collections.abc import Sequence
from typing import Any, Protocol

_FLOAT_FORMATS = {2: "<e", 4: "<f", 8: "<d"}


class ParamLayout(Protocol):
    offset: int
    size: int
    kind: int            # cricket.x cr_param_kind: 0 unknown, 1 integer or pointer, 2 float, 3 bytes


KIND_INT, KIND_FLOAT = 1, 2


class KernelArgumentError(TypeError):
    """A Python value does not fit the kernel parameter it was given for."""


def _encode(value: Any, size: int, index: int, kind: int = 0) -> bytes:
    ptr = getattr(value, "device_ptr", None)
    if ptr is not None:
        if kind == KIND_FLOAT:
            raise KernelArgumentError(f"argument {index}: a device buffer given for a floating-point parameter")
        value = int(ptr)
    if kind == KIND_INT and isinstance(value, float):
        raise KernelArgumentError(f"argument {index}: the float {value!r} given for an integer (or pointer) "
                                  f"parameter; pass an int (e.g. int(x)) or a NumPy scalar of that type")
    if kind == KIND_FLOAT and isinstance(value, (bool, int)):
        value = float(value)         # exact for the values a float parameter is meant to take
    np = sys.modules.get("numpy")        # a NumPy value exists only once NumPy is imported
    if isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
    elif np is not None and (isinstance(value, np.ndarray) and value.ndim == 0
                             or isinstance(value, np.generic)):
        data = np.asarray(value).tobytes()
    elif np is not None and isinstance(value, np.ndarray):
        data = value.tobytes()
    elif isinstance(value, (bool, int)):
        v = int(value)
        if size not in (1, 2, 4, 8):
            raise KernelArgumentError(f"argument {index}: an int cannot fill a {size}-byte parameter")
        lo, hi = -(1 << (8 * size - 1)), (1 << (8 * size)) - 1
        if not lo <= v <= hi:
            raise KernelArgumentError(f"argument {index}: {v} does not fit in {size} bytes")
        return v.to_bytes(size, "little", signed=v < 0)
    elif isinstance(value, float):
        fmt = _FLOAT_FORMATS.get(size)
        if fmt is None:
            raise KernelArgumentError(f"argument {index}: a float cannot fill a {size}-byte parameter")
        return struct.pack(fmt, value)
    else:
        raise KernelArgumentError(
            f"argument {index}: cannot pass {type(value).__name__} to a kernel; use a device buffer, "
            f"int, float, a NumPy scalar or bytes")
    if len(data) != size:
        raise KernelArgumentError(f"argument {index}: {len(data)} bytes given for a {size}-byte parameter")
    return data


def pack_kernel_args(params: Sequence[ParamLayout], param_size: int, args: Sequence[Any]) -> bytes:
    """The parameter buffer for ``args``; KernelArgumentError when the count or a value does not fit."""
    if len(args) != len(params):
        raise KernelArgumentError(f"the kernel takes {len(params)} arguments, {len(args)} given")
    buf = bytearray(param_size)
    for i, (p, value) in enumerate(zip(params, args)):
        if p.offset + p.size > param_size:
            raise KernelArgumentError(f"parameter {i} at {p.offset}+{p.size} lies past the "
                                      f"{param_size}-byte buffer")
        buf[p.offset:p.offset + p.size] = _encode(value, p.size, i, getattr(p, "kind", 0))
    return bytes(buf)
