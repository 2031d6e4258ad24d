"""TCP record marking (RFC 5531 §11), pure-Python twin of ``cext/record.pyx``.

A record is a sequence of fragments, each behind a 4-byte header: bit 31 marks the last fragment,
bits 0-30 give its length. :class:`RecordReader` reassembles records from arbitrary stream chunks
and checks every fragment header against the maximum record size *before* it buffers the fragment.
"""
from __future__ import annotations

from collections.abc import Sequence

from .constants import DEFAULT_MAX_RECORD, LAST_FRAGMENT, MAX_FRAGMENT
from .errors import RecordTooLarge

BytesLike = bytes | bytearray | memoryview


def mark(length: int, last: bool = True) -> bytes:
    """The 4-byte fragment header for a fragment of ``length`` bytes."""
    if not 0 <= length <= MAX_FRAGMENT:
        raise ValueError(f"fragment length {length} is outside 0..{MAX_FRAGMENT}")
    return (length | (LAST_FRAGMENT if last else 0)).to_bytes(4, "big")


def _nbytes(buf: BytesLike) -> int:
    return buf.nbytes if isinstance(buf, memoryview) else len(buf)


def frame(buffers: Sequence[BytesLike], max_fragment: int = MAX_FRAGMENT) -> list[BytesLike]:
    """Buffers ready for ``writelines``: ``buffers`` as one record, split into fragments of at most
    ``max_fragment`` bytes (one fragment when it fits, which is the usual case)."""
    if not 1 <= max_fragment <= MAX_FRAGMENT:
        raise ValueError(f"max_fragment {max_fragment} is outside 1..{MAX_FRAGMENT}")
    total = 0
    for b in buffers:
        total += _nbytes(b)
    if total <= max_fragment:
        return [mark(total, True), *buffers]
    out: list[BytesLike] = []
    left = total
    room = 0                     # bytes the current fragment still takes
    for b in buffers:
        view = memoryview(b).cast("B")
        pos = 0
        while pos < len(view):
            if room == 0:
                room = min(max_fragment, left)
                left -= room
                out.append(mark(room, left == 0))
            take = min(room, len(view) - pos)
            out.append(view[pos:pos + take])
            pos += take
            room -= take
    return out


class RecordReader:
    """Reassembles records from stream chunks; ``feed`` returns the records completed so far."""

    def __init__(self, max_record_size: int = DEFAULT_MAX_RECORD) -> None:
        if max_record_size < 0:
            raise ValueError("max_record_size must not be negative")
        self._max = max_record_size
        self._hdr = bytearray()      # a fragment header split across chunks
        self._parts: list[bytes] = []  # data of the record being assembled
        self._size = 0               # bytes announced so far for that record
        self._frag_left = 0          # bytes of the current fragment still to come
        self._in_header = True
        self._last = False

    @property
    def max_record_size(self) -> int:
        return self._max

    @property
    def in_record(self) -> bool:
        """True while part of a record has arrived but not all of it."""
        return bool(self._hdr) or not self._in_header or bool(self._parts)

    def feed(self, data: BytesLike) -> list[bytes]:
        view = memoryview(data).cast("B")
        n = len(view)
        pos = 0
        out: list[bytes] = []
        while True:
            if self._in_header:
                if not self._hdr and n - pos >= 4:
                    h = int.from_bytes(view[pos:pos + 4], "big")
                    pos += 4
                else:
                    take = min(4 - len(self._hdr), n - pos)
                    self._hdr += view[pos:pos + take]
                    pos += take
                    if len(self._hdr) < 4:
                        break
                    h = int.from_bytes(self._hdr, "big")
                    self._hdr.clear()
                flen = h & MAX_FRAGMENT
                if self._size + flen > self._max:
                    raise RecordTooLarge(self._size + flen, self._max)
                self._last = bool(h & LAST_FRAGMENT)
                self._in_header = False
                if self._last and not self._parts and n - pos >= flen:
                    out.append(bytes(view[pos:pos + flen]))   # whole record in this chunk
                    pos += flen
                    self._in_header = True
                    continue
                self._frag_left = flen
                self._size += flen
            take = min(self._frag_left, n - pos)
            if take:
                self._parts.append(bytes(view[pos:pos + take]))
                pos += take
                self._frag_left -= take
            if self._frag_left:
                break
            self._in_header = True
            if self._last:
                parts = self._parts
                out.append(parts[0] if len(parts) == 1 else b"".join(parts))
                self._parts = []
                self._size = 0
        return out
