"""TCP record marking (RFC 5531 §11), pure-Python twin of ``cext/record.pyx``.

A record is a sequence of fragments, each behind a 4-byte header: bit 31 marks the last fragment,
bits 0-30 give its length. :class:`RecordReader` reassembles records from arbitrary stream chunks
and checks every fragment header against the maximum record size *before* it buffers the fragment.

A one-fragment record that spans chunks (every large payload) is assembled in one buffer allocated
at its header, with no list of pieces and no join. :meth:`RecordReader.writable` hands out the
unfilled part of it, so a reader can ``recv_into`` the record directly and report the bytes with
:meth:`RecordReader.advance` (zero-copy receive; here one copy remains, into the returned bytes).

:class:`FillableBytes` is the same idea for a caller's own payload: a buffer to receive into and
the finished ``bytes`` (here too one copy remains, in ``finish``).
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


class FillableBytes:
    """``size`` bytes to fill through :attr:`view` (e.g. with ``recv_into``), then taken as
    ``bytes`` by :meth:`finish`. After ``finish`` the view must not be written any more (``finish``
    releases it)."""

    def __init__(self, size: int) -> None:
        if size < 0:
            raise ValueError(f"size {size} must not be negative")
        self._buf = bytearray(size)
        self._view = memoryview(self._buf)
        self._data: bytes | None = None

    @property
    def view(self) -> memoryview:
        """A writable memoryview of all the bytes (before :meth:`finish`)."""
        if self._data is not None:
            raise ValueError("finish() was called: the bytes are no longer writable")
        return self._view

    def finish(self) -> bytes:
        """The filled bytes (the same object every time)."""
        if self._data is None:
            self._view.release()
            self._data = bytes(self._buf)
            self._buf = bytearray()
        return self._data


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
        self._rec: bytearray | None = None   # a one-fragment record being filled in place
        self._fill = 0                       # bytes of it filled so far

    @property
    def max_record_size(self) -> int:
        return self._max

    @max_record_size.setter
    def max_record_size(self, value: int) -> None:
        # Checked at each fragment header: a record already under way keeps the limit it passed.
        if value < 0:
            raise ValueError("max_record_size must not be negative")
        self._max = value

    @property
    def in_record(self) -> bool:
        """True while part of a record has arrived but not all of it."""
        return bool(self._hdr) or not self._in_header or bool(self._parts)

    def writable(self) -> memoryview | None:
        """A writable memoryview of the part of the current record still to come (receive into it
        and call :meth:`advance`), or None when no record is being filled in place."""
        if self._rec is None or not self._frag_left:
            return None
        return memoryview(self._rec)[self._fill:self._fill + self._frag_left]

    def advance(self, nbytes: int) -> list[bytes]:
        """Count ``nbytes`` written into the view from :meth:`writable`; returns the records
        completed (the current one once it is full, else none)."""
        if self._rec is None or not 0 <= nbytes <= self._frag_left:
            open_ = self._frag_left if self._rec is not None else 0
            raise ValueError(f"advance({nbytes}): only {open_} bytes of a record are open for writing")
        self._fill += nbytes
        self._frag_left -= nbytes
        if self._frag_left:
            return []
        return [self._finish_in_place()]

    def _finish_in_place(self) -> bytes:
        rec = bytes(self._rec)   # type: ignore[arg-type]
        self._rec = None
        self._in_header = True
        self._size = 0
        return rec

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
                if self._last and not self._parts:
                    if n - pos >= flen:
                        out.append(bytes(view[pos:pos + flen]))   # whole record in this chunk
                        pos += flen
                        self._in_header = True
                        continue
                    self._rec = bytearray(flen)   # the whole record is this fragment
                    self._fill = 0
                self._frag_left = flen
                self._size += flen
            take = min(self._frag_left, n - pos)
            if take:
                if self._rec is not None:
                    self._rec[self._fill:self._fill + take] = view[pos:pos + take]
                    self._fill += take
                else:
                    self._parts.append(bytes(view[pos:pos + take]))
                pos += take
                self._frag_left -= take
            if self._frag_left:
                break
            if self._rec is not None:
                out.append(self._finish_in_place())
                continue
            self._in_header = True
            if self._last:
                parts = self._parts
                out.append(parts[0] if len(parts) == 1 else b"".join(parts))
                self._parts = []
                self._size = 0
        return out
