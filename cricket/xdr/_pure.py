"""Pure-Python twin of ``cext/xdr.pyx``: XDR (RFC 4506) Packer and Unpacker.

Scalars go through xdrlib3's Packer/Unpacker; this module adds what they lack:
declared maximums, length checks against the bytes left before anything is
allocated, strict bool values, quadruple, zero-copy large opaques and errors from
one hierarchy (:mod:`cricket.xdr.errors`).

``Unpacker.unpack_opaque_or_view`` returns an opaque of ``VIEW_MIN`` bytes or more
as a read-only memoryview into the input instead of a copy, but only when the input
is immutable (``bytes``, or a flat memoryview of ``bytes``): such memory can never be
resized, recycled or changed under the view, and the view keeps it alive.
"""
from __future__ import annotations

import struct

import xdrlib3

from cricket.xdr.errors import (XdrDiscriminantError, XdrError, XdrLengthError,
                                XdrTruncatedError, XdrValueError)

#: Opaques at least this long are kept as a separate (uncopied) segment by ``get_buffers``.
ZERO_COPY_MIN = 16384
#: Opaques at least this long may be decoded as views (``Unpacker.unpack_opaque_or_view``).
VIEW_MIN = 65536
#: Largest XDR length/count (``<>`` means this).
MAX_LENGTH = 0xFFFFFFFF

_PAD = (b"", b"\0\0\0", b"\0\0", b"\0")
_Q_INT = struct.Struct(">i")
_Q_UINT = struct.Struct(">I")
_Q_HYPER = struct.Struct(">q")
_Q_UHYPER = struct.Struct(">Q")


def _check_max(n: int, maxlen: int | None, what: str) -> None:
    if maxlen is not None and n > maxlen:
        raise XdrLengthError(f"{what} of length {n} exceeds the declared maximum {maxlen}")


def _as_bytes_view(data, what: str) -> memoryview:
    try:
        view = memoryview(data)
    except TypeError:
        raise XdrValueError(f"{what} must be bytes-like, not {type(data).__name__}") from None
    if view.ndim != 1 or view.itemsize != 1:
        view = view.cast("B")
    return view


def immutable_input(data) -> bool:
    """True when the bytes of ``data`` can never change, move or be reused while a view of them
    lives: ``bytes``, or a flat byte memoryview whose memory belongs to ``bytes``."""
    if type(data) is bytes:
        return True
    if type(data) is memoryview:
        return (type(data.obj) is bytes and data.ndim == 1 and data.itemsize == 1
                and data.c_contiguous)
    return False


class Packer:
    """Append XDR items to a growing buffer; large opaques stay uncopied segments."""

    def __init__(self) -> None:
        self._chunks: list = []
        self._flushed = 0
        self._p = xdrlib3.Packer()

    def reset(self) -> None:
        self._chunks = []
        self._flushed = 0
        self._p.reset()

    def __len__(self) -> int:
        return self._flushed + len(self._p.get_buffer())

    # -- scalars ---------------------------------------------------------------------------
    def _scalar(self, method, x, lo: int, hi: int, what: str) -> None:
        if not isinstance(x, int):
            raise XdrValueError(f"{what} needs an int, got {type(x).__name__}")
        if not lo <= x <= hi:
            raise XdrValueError(f"{x} is out of range for XDR {what} [{lo}, {hi}]")
        method(x)

    def pack_int(self, x: int) -> None:
        self._scalar(self._p.pack_int, x, -0x80000000, 0x7FFFFFFF, "int")

    def pack_uint(self, x: int) -> None:
        self._scalar(self._p.pack_uint, x, 0, 0xFFFFFFFF, "unsigned int")

    def pack_enum(self, x: int) -> None:
        self._scalar(self._p.pack_int, x, -0x80000000, 0x7FFFFFFF, "enum")

    def pack_bool(self, x) -> None:
        self._p.pack_uint(1 if x else 0)

    def pack_hyper(self, x: int) -> None:
        self._scalar(self._p.pack_hyper, x, -0x8000000000000000, 0x7FFFFFFFFFFFFFFF, "hyper")

    def pack_uhyper(self, x: int) -> None:
        self._scalar(self._p.pack_uhyper, x, 0, 0xFFFFFFFFFFFFFFFF, "unsigned hyper")

    def pack_float(self, x: float) -> None:
        try:
            self._p.pack_float(x)
        except (xdrlib3.ConversionError, TypeError, OverflowError, struct.error) as exc:
            raise XdrValueError(f"cannot encode {x!r} as XDR float: {exc}") from None

    def pack_double(self, x: float) -> None:
        try:
            self._p.pack_double(x)
        except (xdrlib3.ConversionError, TypeError, OverflowError, struct.error) as exc:
            raise XdrValueError(f"cannot encode {x!r} as XDR double: {exc}") from None

    def pack_quadruple(self, x) -> None:
        """A quadruple (IEEE binary128) is carried as its 16 big-endian bytes."""
        view = _as_bytes_view(x, "quadruple")
        if len(view) != 16:
            raise XdrValueError(f"quadruple needs exactly 16 bytes, got {len(view)}")
        self._p.pack_fopaque(16, bytes(view))

    # -- bytes -----------------------------------------------------------------------------
    def _append_bytes(self, view: memoryview) -> None:
        """Append ``view`` plus its padding; large ones become their own segment."""
        n = len(view)
        pad = _PAD[n & 3]
        if n >= ZERO_COPY_MIN:
            cur = self._p.get_buffer()
            if cur:
                self._p.reset()
            self._chunks.extend((cur, view, pad) if pad else (cur, view))
            self._flushed += len(cur) + n + len(pad)
        else:
            self._raw(bytes(view) + pad)

    def _raw(self, data: bytes) -> None:
        # ``data`` is a multiple of 4 bytes long, so xdrlib3 adds no padding.
        self._p.pack_fopaque(len(data), data)

    def pack_fopaque(self, n: int, data) -> None:
        view = _as_bytes_view(data, "opaque")
        if len(view) != n:
            raise XdrValueError(f"fixed opaque[{n}] got {len(view)} bytes")
        self._append_bytes(view)

    def pack_opaque(self, data, maxlen: int | None = None) -> None:
        view = _as_bytes_view(data, "opaque")
        n = len(view)
        _check_max(n, maxlen, "opaque")
        if n > MAX_LENGTH:
            raise XdrLengthError(f"opaque of {n} bytes is longer than XDR allows")
        self._p.pack_uint(n)
        self._append_bytes(view)

    def pack_string(self, s, maxlen: int | None = None) -> None:
        if isinstance(s, str):
            try:
                s = s.encode("utf-8", "surrogateescape")
            except UnicodeEncodeError as exc:
                raise XdrValueError(f"string cannot be encoded: {exc}") from None
        self.pack_opaque(s, maxlen)

    def pack_raw(self, data) -> None:
        """Append bytes that already are XDR (for example another Packer's output)."""
        view = _as_bytes_view(data, "raw XDR")
        if len(view) & 3:
            raise XdrValueError(f"raw XDR must be a multiple of 4 bytes, got {len(view)}")
        if len(view) >= ZERO_COPY_MIN:
            self._append_bytes(view)
        else:
            self._raw(bytes(view))

    def pack_array_length(self, n: int, maxlen: int | None = None) -> None:
        _check_max(n, maxlen, "array")
        self.pack_uint(n)

    def pack_int_array(self, values, maxlen: int | None = None, unsigned: bool = False,
                       fixed: int | None = None) -> None:
        """``int v<maxlen>`` (count first) or, with ``fixed``, ``int v[fixed]``, in one go."""
        values = values if isinstance(values, (list, tuple)) else list(values)
        n = len(values)
        if fixed is not None:
            if n != fixed:
                raise XdrValueError(f"fixed array needs {fixed} items, got {n}")
        else:
            _check_max(n, maxlen, "array")
        try:
            data = struct.pack(f">{n}{'I' if unsigned else 'i'}", *values)
        except struct.error as exc:
            raise XdrValueError(f"cannot encode array of {'unsigned ' if unsigned else ''}int: "
                                f"{exc}") from None
        if fixed is None:
            self._p.pack_uint(n)
        self._raw(data)

    # -- output ----------------------------------------------------------------------------
    def get_buffer(self) -> bytes:
        cur = self._p.get_buffer()
        if not self._chunks:
            return cur
        return b"".join([*self._chunks, cur])

    def get_buffers(self) -> list:
        """Segments for ``transport.writelines``: bytes, plus large opaques as memoryviews."""
        cur = self._p.get_buffer()
        out = [c for c in self._chunks if len(c)]
        if cur:
            out.append(cur)
        return out

    def get_record(self) -> bytes:
        """Everything packed as one record (RFC 5531 record marking, last fragment) in one bytes
        object: the first four bytes, packed by the caller as a placeholder, become the mark."""
        out = bytearray(self.get_buffer())
        if len(out) < 4 or len(out) - 4 > 0x7FFFFFFF:
            raise XdrLengthError(f"a record of {len(out) - 4} bytes after its mark cannot be one fragment")
        struct.pack_into(">I", out, 0, 0x80000000 | (len(out) - 4))
        return bytes(out)


class Unpacker:
    """Read XDR items from a bytes-like object; lengths are checked before any allocation."""

    def __init__(self, data, offset: int = 0) -> None:
        view = _as_bytes_view(data, "XDR input")
        self._view = view
        self._immutable = immutable_input(data)
        self._len = len(view)
        if not 0 <= offset <= self._len:
            raise XdrValueError(f"offset {offset} is outside the {self._len}-byte input")
        self._u = xdrlib3.Unpacker(view)
        self._u.set_position(offset)

    @property
    def position(self) -> int:
        return self._u.get_position()

    @position.setter
    def position(self, pos: int) -> None:
        if not 0 <= pos <= self._len:
            raise XdrValueError(f"position {pos} is outside the {self._len}-byte input")
        self._u.set_position(pos)

    @property
    def buffer(self) -> memoryview:
        """The whole input as a flat memoryview of bytes."""
        return self._view

    def remaining(self) -> int:
        return self._len - self._u.get_position()

    def done(self) -> None:
        left = self.remaining()
        if left:
            raise XdrError(f"{left} bytes left over after decoding")

    def _need(self, n: int, what: str) -> int:
        pos = self._u.get_position()
        if self._len - pos < n:
            raise XdrTruncatedError(
                f"truncated XDR: {what} needs {n} bytes at offset {pos}, {self._len - pos} left")
        return pos

    # -- scalars ---------------------------------------------------------------------------
    def unpack_int(self) -> int:
        self._need(4, "int")
        return self._u.unpack_int()

    def unpack_uint(self) -> int:
        self._need(4, "unsigned int")
        return self._u.unpack_uint()

    def unpack_enum(self) -> int:
        self._need(4, "enum")
        return self._u.unpack_int()

    def unpack_bool(self) -> bool:
        self._need(4, "bool")
        v = self._u.unpack_uint()
        if v > 1:
            raise XdrDiscriminantError(f"bool must be 0 or 1, got {v}")
        return v == 1

    def unpack_hyper(self) -> int:
        self._need(8, "hyper")
        return self._u.unpack_hyper()

    def unpack_uhyper(self) -> int:
        self._need(8, "unsigned hyper")
        return self._u.unpack_uhyper()

    def unpack_float(self) -> float:
        self._need(4, "float")
        return self._u.unpack_float()

    def unpack_double(self) -> float:
        self._need(8, "double")
        return self._u.unpack_double()

    def unpack_quadruple(self) -> bytes:
        return self.unpack_fopaque(16)

    # -- bytes -----------------------------------------------------------------------------
    def _take(self, n: int, what: str) -> memoryview:
        padded = n + (-n & 3)
        pos = self._need(padded, what)
        self._u.set_position(pos + padded)
        return self._view[pos:pos + n]

    def unpack_fopaque(self, n: int) -> bytes:
        return bytes(self._take(n, f"opaque[{n}]"))

    def _length(self, maxlen: int | None, what: str) -> int:
        pos = self._need(4, f"{what} length")
        n = self._u.unpack_uint()
        if maxlen is not None and n > maxlen:
            self._u.set_position(pos)
            raise XdrLengthError(f"{what} length {n} at offset {pos} exceeds the declared "
                                 f"maximum {maxlen}")
        return n

    def unpack_opaque_view(self, maxlen: int | None = None) -> memoryview:
        n = self._length(maxlen, "opaque")
        return self._take(n, f"opaque<{n}>")

    def unpack_opaque(self, maxlen: int | None = None) -> bytes:
        return bytes(self.unpack_opaque_view(maxlen))

    def unpack_opaque_or_view(self, maxlen: int | None = None) -> bytes | memoryview:
        """``opaque<maxlen>``: bytes, or when it has ``VIEW_MIN`` bytes or more and the input is
        immutable, a read-only memoryview into the input (no copy)."""
        view = self.unpack_opaque_view(maxlen)
        if len(view) >= VIEW_MIN and self._immutable:
            return view
        return bytes(view)

    def unpack_string(self, maxlen: int | None = None) -> str:
        n = self._length(maxlen, "string")
        return str(self._take(n, f"string<{n}>"), "utf-8", "surrogateescape")

    def unpack_int_array(self, maxlen: int | None = None, unsigned: bool = False,
                         fixed: int | None = None) -> list:
        """Counterpart of ``Packer.pack_int_array``."""
        n = fixed if fixed is not None else self.unpack_array_length(maxlen, 4)
        pos = self._need(4 * n, f"array of {n} ints")
        self._u.set_position(pos + 4 * n)
        return list(struct.unpack_from(f">{n}{'I' if unsigned else 'i'}", self._view, pos))

    def unpack_array_length(self, maxlen: int | None, min_item_size: int = 4) -> int:
        """Read an array count, checked against ``maxlen`` and the bytes left."""
        pos = self._u.get_position()
        n = self._length(maxlen, "array")
        if n * min_item_size > self._len - pos - 4:
            self._u.set_position(pos)
            raise XdrTruncatedError(
                f"truncated XDR: array of {n} items needs at least {n * min_item_size} bytes "
                f"at offset {pos + 4}, {self._len - pos - 4} left")
        return n


__all__ = ["Packer", "Unpacker", "ZERO_COPY_MIN", "VIEW_MIN", "MAX_LENGTH", "XdrError",
           "immutable_input"]
