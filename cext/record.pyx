# cython: language_level=3, boundscheck=False, wraparound=False
"""TCP record marking (RFC 5531 §11) in Cython; the pure-Python twin is ``cricket/rpc/_record.py``.

A record is a sequence of fragments, each behind a 4-byte header: bit 31 marks the last fragment,
bits 0-30 give its length. :class:`RecordReader` reassembles records from arbitrary stream chunks
and checks every fragment header against the maximum record size *before* it buffers the fragment.
"""
from cpython.buffer cimport PyBUF_SIMPLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.bytes cimport PyBytes_FromStringAndSize
from libc.stdint cimport uint32_t

from cricket.rpc.constants import DEFAULT_MAX_RECORD
from cricket.rpc.errors import RecordTooLarge

cdef extern from *:
    """
    #define CRICKET_REC_LAST 0x80000000u
    #define CRICKET_REC_MAXFRAG 0x7FFFFFFF
    """
    const uint32_t LAST "CRICKET_REC_LAST"
    const Py_ssize_t MAXFRAG "CRICKET_REC_MAXFRAG"


cdef inline uint32_t _load_be32(const unsigned char *p) noexcept nogil:
    return ((<uint32_t>p[0]) << 24) | ((<uint32_t>p[1]) << 16) | ((<uint32_t>p[2]) << 8) | p[3]


cpdef bytes mark(Py_ssize_t length, bint last=True):
    """The 4-byte fragment header for a fragment of ``length`` bytes."""
    cdef unsigned char h[4]
    cdef uint32_t v
    if length < 0 or length > MAXFRAG:
        raise ValueError(f"fragment length {length} is outside 0..{MAXFRAG}")
    v = <uint32_t>length | (LAST if last else 0)
    h[0] = (v >> 24) & 0xFF
    h[1] = (v >> 16) & 0xFF
    h[2] = (v >> 8) & 0xFF
    h[3] = v & 0xFF
    return PyBytes_FromStringAndSize(<char *>h, 4)


cdef inline Py_ssize_t _nbytes(object buf):
    if isinstance(buf, memoryview):
        return (<memoryview>buf).nbytes
    return len(buf)


def frame(buffers, Py_ssize_t max_fragment=MAXFRAG):
    """Buffers ready for ``writelines``: ``buffers`` as one record, split into fragments of at most
    ``max_fragment`` bytes (one fragment when it fits, which is the usual case)."""
    cdef Py_ssize_t total = 0, left, room = 0, pos, take, blen
    if max_fragment < 1 or max_fragment > MAXFRAG:
        raise ValueError(f"max_fragment {max_fragment} is outside 1..{MAXFRAG}")
    for b in buffers:
        total += _nbytes(b)
    if total <= max_fragment:
        out = [mark(total, True)]
        out.extend(buffers)
        return out
    out = []
    left = total
    for b in buffers:
        view = memoryview(b).cast("B")
        blen = len(view)
        pos = 0
        while pos < blen:
            if room == 0:
                room = min(max_fragment, left)
                left -= room
                out.append(mark(room, left == 0))
            take = min(room, blen - pos)
            out.append(view[pos:pos + take])
            pos += take
            room -= take
    return out


cdef class RecordReader:
    """Reassembles records from stream chunks; ``feed`` returns the records completed so far."""
    cdef Py_ssize_t _max
    cdef unsigned char _hdr[4]
    cdef int _hdr_len
    cdef list _parts
    cdef Py_ssize_t _size
    cdef Py_ssize_t _frag_left
    cdef bint _in_header
    cdef bint _last

    def __init__(self, Py_ssize_t max_record_size=DEFAULT_MAX_RECORD):
        if max_record_size < 0:
            raise ValueError("max_record_size must not be negative")
        self._max = max_record_size
        self._hdr_len = 0
        self._parts = []
        self._size = 0
        self._frag_left = 0
        self._in_header = True
        self._last = False

    @property
    def max_record_size(self):
        return self._max

    @property
    def in_record(self):
        """True while part of a record has arrived but not all of it."""
        return self._hdr_len > 0 or not self._in_header or len(self._parts) > 0

    def feed(self, data):
        cdef Py_buffer view
        PyObject_GetBuffer(data, &view, PyBUF_SIMPLE)
        try:
            return self._feed(<const unsigned char *>view.buf, view.len)
        finally:
            PyBuffer_Release(&view)

    cdef list _feed(self, const unsigned char *p, Py_ssize_t n):
        cdef Py_ssize_t pos = 0, take, flen
        cdef uint32_t h
        cdef list out = []
        cdef list parts
        while True:
            if self._in_header:
                if self._hdr_len == 0 and n - pos >= 4:
                    h = _load_be32(p + pos)
                    pos += 4
                else:
                    while self._hdr_len < 4 and pos < n:
                        self._hdr[self._hdr_len] = p[pos]
                        self._hdr_len += 1
                        pos += 1
                    if self._hdr_len < 4:
                        break
                    h = _load_be32(self._hdr)
                    self._hdr_len = 0
                flen = h & MAXFRAG
                if self._size + flen > self._max:
                    raise RecordTooLarge(self._size + flen, self._max)
                self._last = (h & LAST) != 0
                self._in_header = False
                if self._last and len(self._parts) == 0 and n - pos >= flen:
                    out.append(PyBytes_FromStringAndSize(<const char *>p + pos, flen))
                    pos += flen
                    self._in_header = True
                    continue
                self._frag_left = flen
                self._size += flen
            take = self._frag_left if self._frag_left < n - pos else n - pos
            if take > 0:
                self._parts.append(PyBytes_FromStringAndSize(<const char *>p + pos, take))
                pos += take
                self._frag_left -= take
            if self._frag_left > 0:
                break
            self._in_header = True
            if self._last:
                parts = self._parts
                out.append(parts[0] if len(parts) == 1 else b"".join(parts))
                self._parts = []
                self._size = 0
        return out
