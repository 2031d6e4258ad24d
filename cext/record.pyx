# cython: language_level=3, boundscheck=False, wraparound=False
"""TCP record marking (RFC 5531 §11) in Cython; the pure-Python twin is ``cricket/rpc/_record.py``,
the interface ``cricket/_cext/record.pxd``.

A record is a sequence of fragments, each behind a 4-byte header: bit 31 marks the last fragment,
bits 0-30 give its length. :class:`RecordReader` reassembles records from arbitrary stream chunks
and checks every fragment header against the maximum record size *before* it buffers the fragment.

A one-fragment record that spans chunks (every large payload) is assembled in place: the record's
``bytes`` is allocated once at its header and filled as data arrives, with no list of pieces and no
join. :meth:`RecordReader.writable` hands out the unfilled part of it, so a reader can ``recv_into``
the record directly and report the bytes with :meth:`RecordReader.advance` (zero-copy receive).

:class:`FillableBytes` is the same idea for a caller's own payload: a ``bytes`` object allocated
unfilled, a writable view to receive into, and the finished ``bytes`` without a copy.
"""
from cpython.buffer cimport PyBUF_SIMPLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from libc.stdint cimport uint32_t
from libc.string cimport memcpy

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


cdef class _Window:
    """A writable buffer over part of a record still being received; keeps the record alive."""
    cdef object _owner
    cdef char *_ptr
    cdef Py_ssize_t _len
    cdef Py_ssize_t _shape[1]
    cdef Py_ssize_t _strides[1]

    def __getbuffer__(self, Py_buffer *buffer, int flags):
        self._shape[0] = self._len
        self._strides[0] = 1
        buffer.buf = self._ptr
        buffer.obj = self
        buffer.len = self._len
        buffer.readonly = 0
        buffer.itemsize = 1
        buffer.format = "B"
        buffer.ndim = 1
        buffer.shape = self._shape
        buffer.strides = self._strides
        buffer.suboffsets = NULL
        buffer.internal = NULL

    def __releasebuffer__(self, Py_buffer *buffer):
        pass


cdef class FillableBytes:
    """``size`` bytes to fill through :attr:`view` (e.g. with ``recv_into``), then taken as
    ``bytes`` by :meth:`finish` with no copy. Until ``finish`` the bytes are seen by no one else;
    after it the view must not be written any more (``finish`` releases it)."""
    cdef bytes _data
    cdef object _view
    cdef bint _done

    def __init__(self, Py_ssize_t size):
        cdef _Window w
        if size < 0:
            raise ValueError(f"size {size} must not be negative")
        self._done = False
        if size == 0:
            self._data = b""
            self._view = memoryview(bytearray())
            return
        self._data = PyBytes_FromStringAndSize(NULL, size)
        w = _Window.__new__(_Window)
        w._owner = self._data
        w._ptr = PyBytes_AS_STRING(self._data)
        w._len = size
        self._view = memoryview(w)

    @property
    def view(self):
        """A writable memoryview of all the bytes (before :meth:`finish`)."""
        if self._done:
            raise ValueError("finish() was called: the bytes are no longer writable")
        return self._view

    def finish(self) -> bytes:
        """The filled bytes (the same object every time)."""
        if not self._done:
            self._done = True
            self._view.release()
        return self._data


cdef class RecordReader:
    """Reassembles records from stream chunks; ``feed`` returns the records completed so far.
    (Its fields are declared in ``cricket/_cext/record.pxd``.)"""

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
        self._rec = None
        self._fill = 0

    @property
    def max_record_size(self):
        return self._max

    @max_record_size.setter
    def max_record_size(self, Py_ssize_t value):
        # Checked at each fragment header: a record already under way keeps the limit it passed.
        if value < 0:
            raise ValueError("max_record_size must not be negative")
        self._max = value

    @property
    def in_record(self):
        """True while part of a record has arrived but not all of it."""
        return self._hdr_len > 0 or not self._in_header or len(self._parts) > 0

    def writable(self):
        """A writable memoryview of the part of the current record still to come (receive into it
        and call :meth:`advance`), or None when no record is being filled in place."""
        cdef _Window w
        if self._rec is None or self._frag_left == 0:
            return None
        w = _Window.__new__(_Window)
        w._owner = self._rec
        w._ptr = PyBytes_AS_STRING(self._rec) + self._fill
        w._len = self._frag_left
        return memoryview(w)

    def advance(self, Py_ssize_t nbytes):
        """Count ``nbytes`` written into the view from :meth:`writable`; returns the records
        completed (the current one once it is full, else none)."""
        cdef bytes rec
        if self._rec is None or nbytes < 0 or nbytes > self._frag_left:
            raise ValueError(f"advance({nbytes}): only {self._frag_left if self._rec is not None else 0} "
                             "bytes of a record are open for writing")
        self._fill += nbytes
        self._frag_left -= nbytes
        if self._frag_left:
            return []
        rec = self._rec
        self._rec = None
        self._in_header = True
        self._size = 0
        return [rec]

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
                if self._last and len(self._parts) == 0:
                    if n - pos >= flen:
                        out.append(PyBytes_FromStringAndSize(<const char *>p + pos, flen))
                        pos += flen
                        self._in_header = True
                        continue
                    # The whole record is this fragment: allocate it once, fill it in place.
                    self._rec = PyBytes_FromStringAndSize(NULL, flen)
                    self._fill = 0
                self._frag_left = flen
                self._size += flen
            take = self._frag_left if self._frag_left < n - pos else n - pos
            if take > 0:
                if self._rec is not None:
                    memcpy(PyBytes_AS_STRING(self._rec) + self._fill, p + pos, take)
                    self._fill += take
                else:
                    self._parts.append(PyBytes_FromStringAndSize(<const char *>p + pos, take))
                pos += take
                self._frag_left -= take
            if self._frag_left > 0:
                break
            self._in_header = True
            if self._rec is not None:
                out.append(self._rec)
                self._rec = None
                self._size = 0
            elif self._last:
                parts = self._parts
                out.append(parts[0] if len(parts) == 1 else b"".join(parts))
                self._parts = []
                self._size = 0
        return out
