# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""XDR (RFC 4506) buffer primitives as Python objects: a reusable ``Packer`` and a checked ``Unpacker``.

Both sit on the one XDR buffer library, ``cext/xdr_buffer.pxd`` (the write buffer ``W`` and
the read cursor ``R`` that the generated codecs use too). The pure-Python twin is
``cricket/xdr/_pure.py``; both are reached through ``cricket.xdr``. The Packer hands opaques of
``ZERO_COPY_MIN`` bytes or more to ``get_buffers()`` as uncopied memoryviews. The Unpacker checks
every length against the declared maximum and against the bytes left before it allocates anything.

``Unpacker.unpack_opaque_or_view`` returns an opaque of ``VIEW_MIN`` bytes or more
as a read-only memoryview into the input instead of a copy, but only when the input
is immutable (``bytes``, or a flat memoryview of ``bytes``): such memory can never be
resized, recycled or changed under the view, and the view keeps it alive.
"""
from cpython.buffer cimport PyObject_GetBuffer, PyBuffer_Release, PyBUF_SIMPLE
from cpython.bytes cimport PyBytes_FromStringAndSize, PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.memoryview cimport PyMemoryView_GET_BUFFER
from cpython.ref cimport PyObject
from libc.stdint cimport int32_t, uint32_t, int64_t, uint64_t
from libc.string cimport memcpy, memset

from xdr_buffer cimport (
    NO_MAX, R, W, _r_bool, _r_count, _r_double, _r_float, _r_fopaque, _r_hyper, _r_int,
    _r_int_list, _r_length, _r_opaque, _r_string, _r_take, _r_u32, _r_uhyper, _r_uint, _w_bool,
    _w_double, _w_float, _w_free, _w_hyper, _w_init, _w_int, _w_int_list, _w_room, _w_u32,
    _w_uhyper, xdr_put32, ZERO_COPY_MIN as _ZC_MIN, VIEW_MIN as _VIEW_MIN)

from cricket.xdr.errors import (XdrDiscriminantError, XdrError, XdrLengthError,
                                XdrTruncatedError, XdrValueError)

ZERO_COPY_MIN = _ZC_MIN
VIEW_MIN = _VIEW_MIN
MAX_LENGTH = 0xFFFFFFFF


cdef inline Py_ssize_t _limit(object maxlen):
    return NO_MAX if maxlen is None else maxlen


cdef class Packer:
    """Append XDR items to a growing buffer; large opaques stay uncopied segments."""

    cdef W w
    cdef list chunks          # flushed bytes and zero-copy memoryviews, in order
    cdef Py_ssize_t flushed   # total size of ``chunks``

    def __cinit__(self):
        _w_init(&self.w, NULL, 0, None)
        self.chunks = None
        self.flushed = 0

    def __dealloc__(self):
        _w_free(&self.w)

    cdef int _put_bytes(self, object data, Py_ssize_t expect, bint check_expect) except -1:
        """Append ``data`` plus padding, zero-copy when large; returns 0."""
        cdef Py_buffer view
        cdef Py_ssize_t n, pad
        cdef char *p
        if isinstance(data, bytes):
            n = PyBytes_GET_SIZE(data)
            if check_expect and n != expect:
                raise XdrValueError(f"fixed opaque[{expect}] got {n} bytes")
            if n >= _ZC_MIN:
                self._segment(memoryview(data), n)
                return 0
            pad = (-n) & 3
            p = _w_room(&self.w, n + pad)
            memcpy(p, PyBytes_AS_STRING(data), n)
            memset(p + n, 0, pad)
            self.w.n += n + pad
            return 0
        try:
            PyObject_GetBuffer(data, &view, PyBUF_SIMPLE)
        except TypeError:
            raise XdrValueError(f"opaque data must be bytes-like, not {type(data).__name__}") from None
        try:
            n = view.len
            if check_expect and n != expect:
                raise XdrValueError(f"fixed opaque[{expect}] got {n} bytes")
            if n >= _ZC_MIN:
                self._segment(memoryview(data).cast("B") if view.itemsize != 1 else memoryview(data), n)
                return 0
            pad = (-n) & 3
            p = _w_room(&self.w, n + pad)
            memcpy(p, view.buf, n)
            memset(p + n, 0, pad)
            self.w.n += n + pad
        finally:
            PyBuffer_Release(&view)
        return 0

    cdef int _segment(self, object mv, Py_ssize_t n) except -1:
        cdef Py_ssize_t pad = (-n) & 3
        if self.chunks is None:
            self.chunks = []
        if self.w.n:
            self.chunks.append(PyBytes_FromStringAndSize(self.w.buf, self.w.n))
            self.flushed += self.w.n
            self.w.n = 0
        self.chunks.append(mv)
        self.flushed += n
        if pad:
            memset(_w_room(&self.w, pad), 0, pad)
            self.w.n += pad
        return 0

    cdef inline Py_ssize_t _len_of(self, object data) except -1:
        if isinstance(data, bytes):
            return PyBytes_GET_SIZE(data)
        if type(data) is memoryview:        # a result that is a view of the arguments (ECHO)
            return PyMemoryView_GET_BUFFER(data).len
        try:
            return memoryview(data).nbytes
        except TypeError:
            raise XdrValueError(f"opaque data must be bytes-like, not {type(data).__name__}") from None

    # -- public API -----------------------------------------------------------------------
    def reset(self) -> None:
        self.w.n = 0
        self.chunks = None
        self.flushed = 0

    def __len__(self) -> int:
        return self.flushed + self.w.n

    def pack_int(self, x) -> None:
        _w_int(&self.w, x, -0x80000000, 0x7FFFFFFF, "int")

    def pack_uint(self, x) -> None:
        _w_int(&self.w, x, 0, 0xFFFFFFFF, "unsigned int")

    def pack_enum(self, x) -> None:
        _w_int(&self.w, x, -0x80000000, 0x7FFFFFFF, "enum")

    def pack_bool(self, x) -> None:
        _w_bool(&self.w, x)

    def pack_hyper(self, x) -> None:
        _w_hyper(&self.w, x)

    def pack_uhyper(self, x) -> None:
        _w_uhyper(&self.w, x)

    def pack_float(self, x) -> None:
        _w_float(&self.w, x)

    def pack_double(self, x) -> None:
        _w_double(&self.w, x)

    def pack_quadruple(self, x) -> None:
        """A quadruple (IEEE binary128) is carried as its 16 big-endian bytes."""
        if self._len_of(x) != 16:
            raise XdrValueError(f"quadruple needs exactly 16 bytes, got {self._len_of(x)}")
        self._put_bytes(x, 16, True)

    def pack_fopaque(self, Py_ssize_t n, data) -> None:
        self._put_bytes(data, n, True)

    def pack_opaque(self, data, maxlen=None) -> None:
        cdef Py_ssize_t n = self._len_of(data)
        if maxlen is not None and n > maxlen:
            raise XdrLengthError(f"opaque of length {n} exceeds the declared maximum {maxlen}")
        if n > 0xFFFFFFFF:
            raise XdrLengthError(f"opaque of {n} bytes is longer than XDR allows")
        _w_u32(&self.w, <uint32_t>n)
        self._put_bytes(data, 0, False)

    def pack_string(self, s, maxlen=None) -> None:
        if isinstance(s, str):
            try:
                s = (<str>s).encode("utf-8", "surrogateescape")
            except UnicodeEncodeError as exc:
                raise XdrValueError(f"string cannot be encoded: {exc}") from None
        self.pack_opaque(s, maxlen)

    def pack_raw(self, data) -> None:
        """Append bytes that already are XDR (for example another Packer's output)."""
        cdef Py_ssize_t n = self._len_of(data)
        if n & 3:
            raise XdrValueError(f"raw XDR must be a multiple of 4 bytes, got {n}")
        self._put_bytes(data, 0, False)

    def pack_array_length(self, n, maxlen=None) -> None:
        if maxlen is not None and n > maxlen:
            raise XdrLengthError(f"array of length {n} exceeds the declared maximum {maxlen}")
        self.pack_uint(n)

    def pack_int_array(self, values, maxlen=None, bint unsigned=False, fixed=None) -> None:
        """``int v<maxlen>`` (count first) or, with ``fixed``, ``int v[fixed]``, in one go."""
        if unsigned:
            lo, hi, what = 0, 0xFFFFFFFF, "unsigned int"
        else:
            lo, hi, what = -0x80000000, 0x7FFFFFFF, "int"
        if fixed is not None:
            _w_int_list(&self.w, values, fixed, lo, hi, what, False)
        else:
            _w_int_list(&self.w, values, _limit(maxlen), lo, hi, what, True)

    def get_buffer(self) -> bytes:
        cdef bytes cur = PyBytes_FromStringAndSize(self.w.buf, self.w.n)
        if not self.chunks:
            return cur
        return b"".join(self.chunks + [cur])

    def get_buffers(self) -> list:
        """Segments for ``transport.writelines``: bytes, plus large opaques as memoryviews."""
        out = list(self.chunks) if self.chunks else []
        if self.w.n:
            out.append(PyBytes_FromStringAndSize(self.w.buf, self.w.n))
        return out

    def get_record(self) -> bytes:
        """Everything packed as one record (RFC 5531 record marking, last fragment) in one bytes
        object: the first four bytes, packed by the caller as a placeholder, become the mark."""
        cdef Py_ssize_t n = self.flushed + self.w.n
        cdef bytes out
        cdef char *p
        cdef Py_buffer view
        if n < 4 or n - 4 > 0x7FFFFFFF:
            raise XdrLengthError(f"a record of {n - 4} bytes after its mark cannot be one fragment")
        out = PyBytes_FromStringAndSize(NULL, n)
        p = PyBytes_AS_STRING(out)
        for chunk in self.chunks or ():
            PyObject_GetBuffer(chunk, &view, PyBUF_SIMPLE)
            memcpy(p, view.buf, view.len)
            p += view.len
            PyBuffer_Release(&view)
        memcpy(p, self.w.buf, self.w.n)
        xdr_put32(PyBytes_AS_STRING(out), 0x80000000 | <uint32_t>(n - 4))
        return out


cpdef bint immutable_input(object data):
    """True when the bytes of ``data`` can never change, move or be reused while a view of them
    lives: ``bytes``, or a flat byte memoryview whose memory belongs to ``bytes``."""
    cdef object mv
    if type(data) is bytes:
        return True
    if type(data) is memoryview:
        mv = data
        return (type(mv.obj) is bytes and mv.ndim == 1 and mv.itemsize == 1
                and mv.c_contiguous)
    return False


cdef class Unpacker:
    """Read XDR items from a bytes-like object; lengths are checked before any allocation."""

    cdef Py_buffer view
    cdef bint have_view
    cdef R r
    cdef object obj
    cdef object mv

    def __cinit__(self, data, Py_ssize_t offset=0):
        self.have_view = False
        try:
            PyObject_GetBuffer(data, &self.view, PyBUF_SIMPLE)
        except (TypeError, BufferError) as exc:
            raise XdrValueError(f"XDR input must be a contiguous bytes-like object: {exc}") from None
        self.have_view = True
        self.obj = data
        self.r.buf = <const unsigned char *>self.view.buf
        self.r.end = self.view.len
        self.r.owner = <PyObject *>data if immutable_input(data) else NULL
        if offset < 0 or offset > self.r.end:
            raise XdrValueError(f"offset {offset} is outside the {self.r.end}-byte input")
        self.r.pos = offset

    def __dealloc__(self):
        if self.have_view:
            PyBuffer_Release(&self.view)

    @property
    def position(self) -> int:
        return self.r.pos

    @position.setter
    def position(self, Py_ssize_t pos) -> None:
        if pos < 0 or pos > self.r.end:
            raise XdrValueError(f"position {pos} is outside the {self.r.end}-byte input")
        self.r.pos = pos

    @property
    def buffer(self) -> memoryview:
        """The whole input as a flat memoryview of bytes (made once, on first use)."""
        if self.mv is None:
            mv = memoryview(self.obj)
            self.mv = mv if (mv.ndim == 1 and mv.itemsize == 1) else mv.cast("B")
        return self.mv

    def remaining(self) -> int:
        return self.r.end - self.r.pos

    def done(self) -> None:
        if self.r.pos < self.r.end:
            raise XdrError(f"{self.r.end - self.r.pos} bytes left over after decoding")

    def unpack_int(self) -> int:
        return _r_int(&self.r)

    def unpack_uint(self) -> int:
        return _r_uint(&self.r)

    def unpack_enum(self) -> int:
        return <int32_t>_r_u32(&self.r, "enum")

    def unpack_bool(self) -> bool:
        return _r_bool(&self.r)

    def unpack_hyper(self) -> int:
        return _r_hyper(&self.r)

    def unpack_uhyper(self) -> int:
        return _r_uhyper(&self.r)

    def unpack_float(self) -> float:
        return _r_float(&self.r)

    def unpack_double(self) -> float:
        return _r_double(&self.r)

    def unpack_quadruple(self) -> bytes:
        return _r_fopaque(&self.r, 16)

    def unpack_fopaque(self, Py_ssize_t n) -> bytes:
        if n < 0:
            raise XdrValueError(f"fixed opaque size must be >= 0, got {n}")
        return _r_fopaque(&self.r, n)

    def unpack_opaque(self, maxlen=None) -> bytes:
        return _r_opaque(&self.r, _limit(maxlen))

    def unpack_opaque_view(self, maxlen=None) -> memoryview:
        cdef Py_ssize_t n = _r_length(&self.r, _limit(maxlen), "opaque")
        cdef Py_ssize_t start = self.r.pos
        _r_take(&self.r, (n + 3) & ~3, "opaque body")
        return self.buffer[start:start + n]

    def unpack_opaque_or_view(self, maxlen=None):
        """``opaque<maxlen>``: bytes, or when it has ``VIEW_MIN`` bytes or more and the input is
        immutable, a read-only memoryview into the input (no copy)."""
        cdef Py_ssize_t n = _r_length(&self.r, _limit(maxlen), "opaque")
        cdef Py_ssize_t start = self.r.pos
        cdef const unsigned char *p = _r_take(&self.r, (n + 3) & ~3, "opaque body")
        if n >= _VIEW_MIN and self.r.owner != NULL:
            return self.buffer[start:start + n]
        return PyBytes_FromStringAndSize(<const char *>p, n)

    def unpack_string(self, maxlen=None) -> str:
        return _r_string(&self.r, _limit(maxlen))

    def unpack_int_array(self, maxlen=None, bint unsigned=False, fixed=None) -> list:
        """Counterpart of ``Packer.pack_int_array``."""
        cdef Py_ssize_t n = fixed if fixed is not None else _r_count(&self.r, _limit(maxlen), 4)
        if unsigned:
            return _r_int_list(&self.r, n, False, 0, 0xFFFFFFFF, "unsigned int")
        return _r_int_list(&self.r, n, True, -0x80000000, 0x7FFFFFFF, "int")

    def unpack_array_length(self, maxlen, Py_ssize_t min_item_size=4) -> int:
        """Read an array count, checked against ``maxlen`` and the bytes left."""
        return _r_count(&self.r, _limit(maxlen), min_item_size)
