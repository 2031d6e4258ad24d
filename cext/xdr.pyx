# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""XDR (RFC 4506) buffer primitives: a reusable write buffer and a checked read cursor.

The pure-Python twin is ``cricket/xdr/_pure.py``; both are reached through
``cricket.xdr``.  The Packer writes into one malloc'd buffer and hands opaques of
``ZERO_COPY_MIN`` bytes or more to ``get_buffers()`` as uncopied memoryviews.  The
Unpacker reads through a raw pointer into the caller's buffer and checks every
length against the declared maximum and against the bytes left before it
allocates anything.

``Unpacker.unpack_opaque_or_view`` returns an opaque of ``VIEW_MIN`` bytes or more
as a read-only memoryview into the input instead of a copy, but only when the input
is immutable (``bytes``, or a flat memoryview of ``bytes``): such memory can never be
resized, recycled or changed under the view, and the view keeps it alive.
"""
from cpython.buffer cimport PyObject_GetBuffer, PyBuffer_Release, PyBUF_SIMPLE
from cpython.bytes cimport PyBytes_FromStringAndSize, PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.mem cimport PyMem_Malloc, PyMem_Realloc, PyMem_Free
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdint cimport int32_t, uint32_t, int64_t, uint64_t, INT64_MIN, INT64_MAX
from libc.string cimport memcpy, memset
from libc.math cimport isfinite, fabs

from cpython.exc cimport PyErr_Occurred, PyErr_Clear

cdef extern from "Python.h":
    # no exception spec: the caller checks -1 + PyErr_Occurred (cheaper than a try block)
    long long PyLong_AsLongLong(object) noexcept

from cricket.xdr.errors import (XdrDiscriminantError, XdrError, XdrLengthError,
                                XdrTruncatedError, XdrValueError)

ZERO_COPY_MIN = 16384
VIEW_MIN = 65536
MAX_LENGTH = 0xFFFFFFFF
DEF _ZC_MIN = 16384
DEF _VIEW_MIN = 65536
DEF _INITIAL = 256

cdef extern from *:
    """
    static inline void cx_put32(char *p, uint32_t v) {
        p[0] = (char)(v >> 24); p[1] = (char)(v >> 16); p[2] = (char)(v >> 8); p[3] = (char)v;
    }
    static inline uint32_t cx_get32(const unsigned char *p) {
        return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
    }
    static inline void cx_put64(char *p, uint64_t v) {
        cx_put32(p, (uint32_t)(v >> 32)); cx_put32(p + 4, (uint32_t)v);
    }
    static inline uint64_t cx_get64(const unsigned char *p) {
        return ((uint64_t)cx_get32(p) << 32) | cx_get32(p + 4);
    }
    static inline uint32_t cx_f2u(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
    static inline float cx_u2f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
    static inline uint64_t cx_d2u(double d) { uint64_t u; memcpy(&u, &d, 8); return u; }
    static inline double cx_u2d(uint64_t u) { double d; memcpy(&d, &u, 8); return d; }
    #define CX_FLT_MAX 3.40282346638528859811704183484516925e+38
    """
    void cx_put32(char *p, uint32_t v) nogil
    uint32_t cx_get32(const unsigned char *p) nogil
    void cx_put64(char *p, uint64_t v) nogil
    uint64_t cx_get64(const unsigned char *p) nogil
    uint32_t cx_f2u(float f) nogil
    float cx_u2f(uint32_t u) nogil
    uint64_t cx_d2u(double d) nogil
    double cx_u2d(uint64_t u) nogil
    double CX_FLT_MAX


cdef inline int64_t _as_int(object x, int64_t lo, int64_t hi, str what) except? -1:
    cdef int64_t v
    if not isinstance(x, int):
        raise XdrValueError(f"{what} needs an int, got {type(x).__name__}")
    v = PyLong_AsLongLong(x)
    if v < lo or v > hi or (v == -1 and PyErr_Occurred() != NULL):
        PyErr_Clear()
        raise XdrValueError(f"{x} is out of range for XDR {what} [{lo}, {hi}]")
    return v


cdef inline uint64_t _as_uhyper(object x) except? 0xFFFFFFFFFFFFFFFF:
    if not isinstance(x, int):
        raise XdrValueError(f"unsigned hyper needs an int, got {type(x).__name__}")
    try:
        return x
    except (OverflowError, TypeError):
        if isinstance(x, int):
            raise XdrValueError(
                f"{x} is out of range for XDR unsigned hyper [0, 18446744073709551615]") from None
        raise XdrValueError(f"unsigned hyper needs an int, got {type(x).__name__}") from None


cdef class Packer:
    """Append XDR items to a growing buffer; large opaques stay uncopied segments."""

    cdef char *buf
    cdef Py_ssize_t length
    cdef Py_ssize_t cap
    cdef list chunks          # flushed bytes and zero-copy memoryviews, in order
    cdef Py_ssize_t flushed   # total size of ``chunks``

    def __cinit__(self):
        self.buf = <char *>PyMem_Malloc(_INITIAL)
        if self.buf is NULL:
            raise MemoryError()
        self.cap = _INITIAL
        self.length = 0
        self.chunks = None
        self.flushed = 0

    def __dealloc__(self):
        PyMem_Free(self.buf)

    cdef inline char *_grow(self, Py_ssize_t n) except NULL:
        """Room for ``n`` more bytes; returns the write position."""
        cdef Py_ssize_t need = self.length + n
        cdef Py_ssize_t cap
        cdef char *nb
        if need > self.cap:
            cap = self.cap * 2
            while cap < need:
                cap *= 2
            nb = <char *>PyMem_Realloc(self.buf, cap)
            if nb is NULL:
                raise MemoryError()
            self.buf = nb
            self.cap = cap
        return self.buf + self.length

    cdef inline int _put32(self, uint32_t v) except -1:
        cdef char *p = self._grow(4)
        cx_put32(p, v)
        self.length += 4
        return 0

    cdef inline int _put64(self, uint64_t v) except -1:
        cdef char *p = self._grow(8)
        cx_put64(p, v)
        self.length += 8
        return 0

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
            p = self._grow(n + pad)
            memcpy(p, PyBytes_AS_STRING(data), n)
            memset(p + n, 0, pad)
            self.length += n + pad
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
            p = self._grow(n + pad)
            memcpy(p, view.buf, n)
            memset(p + n, 0, pad)
            self.length += n + pad
        finally:
            PyBuffer_Release(&view)
        return 0

    cdef int _segment(self, object mv, Py_ssize_t n) except -1:
        cdef Py_ssize_t pad = (-n) & 3
        if self.chunks is None:
            self.chunks = []
        if self.length:
            self.chunks.append(PyBytes_FromStringAndSize(self.buf, self.length))
            self.flushed += self.length
            self.length = 0
        self.chunks.append(mv)
        self.flushed += n
        if pad:
            memset(self._grow(pad), 0, pad)
            self.length += pad
        return 0

    cdef inline Py_ssize_t _len_of(self, object data) except -1:
        if isinstance(data, bytes):
            return PyBytes_GET_SIZE(data)
        try:
            return memoryview(data).nbytes
        except TypeError:
            raise XdrValueError(f"opaque data must be bytes-like, not {type(data).__name__}") from None

    # -- public API -----------------------------------------------------------------------
    def reset(self) -> None:
        self.length = 0
        self.chunks = None
        self.flushed = 0

    def __len__(self) -> int:
        return self.flushed + self.length

    def pack_int(self, x) -> None:
        self._put32(<uint32_t><int32_t>_as_int(x, -0x80000000, 0x7FFFFFFF, "int"))

    def pack_uint(self, x) -> None:
        self._put32(<uint32_t>_as_int(x, 0, 0xFFFFFFFF, "unsigned int"))

    def pack_enum(self, x) -> None:
        self._put32(<uint32_t><int32_t>_as_int(x, -0x80000000, 0x7FFFFFFF, "enum"))

    def pack_bool(self, x) -> None:
        self._put32(1 if x else 0)

    def pack_hyper(self, x) -> None:
        self._put64(<uint64_t>_as_int(x, INT64_MIN, INT64_MAX, "hyper"))

    def pack_uhyper(self, x) -> None:
        self._put64(_as_uhyper(x))

    def pack_float(self, x) -> None:
        cdef double d
        try:
            d = x
        except TypeError:
            raise XdrValueError(f"XDR float needs a number, got {type(x).__name__}") from None
        if isfinite(d) and fabs(d) > CX_FLT_MAX:
            raise XdrValueError(f"{x!r} is too large for an XDR float")
        self._put32(cx_f2u(<float>d))

    def pack_double(self, x) -> None:
        cdef double d
        try:
            d = x
        except TypeError:
            raise XdrValueError(f"XDR double needs a number, got {type(x).__name__}") from None
        self._put64(cx_d2u(d))

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
        self._put32(<uint32_t>n)
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
        cdef Py_ssize_t i, n
        cdef char *p
        cdef int64_t v, lo = 0 if unsigned else -0x80000000
        cdef int64_t hi = 0xFFFFFFFF if unsigned else 0x7FFFFFFF
        if type(values) is not list:
            values = list(values)
        n = len(<list>values)
        if fixed is not None:
            if n != fixed:
                raise XdrValueError(f"fixed array needs {fixed} items, got {n}")
        elif maxlen is not None and n > maxlen:
            raise XdrLengthError(f"array of length {n} exceeds the declared maximum {maxlen}")
        p = self._grow(4 * n + 4)
        if fixed is None:
            cx_put32(p, <uint32_t>n)
            p += 4
        for i in range(n):
            item = (<list>values)[i]
            v = _as_int(item, lo, hi, "unsigned int" if unsigned else "int")
            cx_put32(p, <uint32_t>v)
            p += 4
        self.length += 4 * n + (0 if fixed is not None else 4)

    def get_buffer(self) -> bytes:
        cdef bytes cur = PyBytes_FromStringAndSize(self.buf, self.length)
        if not self.chunks:
            return cur
        return b"".join(self.chunks + [cur])

    def get_buffers(self) -> list:
        """Segments for ``transport.writelines``: bytes, plus large opaques as memoryviews."""
        out = list(self.chunks) if self.chunks else []
        if self.length:
            out.append(PyBytes_FromStringAndSize(self.buf, self.length))
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
    cdef const unsigned char *data
    cdef Py_ssize_t pos
    cdef Py_ssize_t end
    cdef object obj
    cdef object mv
    cdef bint immutable       # views into the input are safe (see immutable_input)

    def __cinit__(self, data, Py_ssize_t offset=0):
        self.have_view = False
        try:
            PyObject_GetBuffer(data, &self.view, PyBUF_SIMPLE)
        except (TypeError, BufferError) as exc:
            raise XdrValueError(f"XDR input must be a contiguous bytes-like object: {exc}") from None
        self.have_view = True
        self.obj = data
        self.immutable = immutable_input(data)
        self.data = <const unsigned char *>self.view.buf
        self.end = self.view.len
        if offset < 0 or offset > self.end:
            raise XdrValueError(f"offset {offset} is outside the {self.end}-byte input")
        self.pos = offset

    def __dealloc__(self):
        if self.have_view:
            PyBuffer_Release(&self.view)

    @property
    def position(self) -> int:
        return self.pos

    @position.setter
    def position(self, Py_ssize_t pos) -> None:
        if pos < 0 or pos > self.end:
            raise XdrValueError(f"position {pos} is outside the {self.end}-byte input")
        self.pos = pos

    @property
    def buffer(self) -> memoryview:
        """The whole input as a flat memoryview of bytes (made once, on first use)."""
        if self.mv is None:
            mv = memoryview(self.obj)
            self.mv = mv if (mv.ndim == 1 and mv.itemsize == 1) else mv.cast("B")
        return self.mv

    def remaining(self) -> int:
        return self.end - self.pos

    def done(self) -> None:
        if self.pos < self.end:
            raise XdrError(f"{self.end - self.pos} bytes left over after decoding")

    cdef inline const unsigned char *_need(self, Py_ssize_t n, str what) except NULL:
        cdef const unsigned char *p
        if self.end - self.pos < n:
            raise XdrTruncatedError(f"truncated XDR: {what} needs {n} bytes at offset "
                                    f"{self.pos}, {self.end - self.pos} left")
        p = self.data + self.pos
        self.pos += n
        return p

    cdef inline uint32_t _u32(self, str what) except? 0xFFFFFFFF:
        return cx_get32(self._need(4, what))

    def unpack_int(self) -> int:
        return <int32_t>cx_get32(self._need(4, "int"))

    def unpack_uint(self) -> int:
        return cx_get32(self._need(4, "unsigned int"))

    def unpack_enum(self) -> int:
        return <int32_t>cx_get32(self._need(4, "enum"))

    def unpack_bool(self) -> bool:
        cdef uint32_t v = cx_get32(self._need(4, "bool"))
        if v > 1:
            self.pos -= 4
            raise XdrDiscriminantError(f"bool must be 0 or 1, got {v}")
        return v == 1

    def unpack_hyper(self) -> int:
        return <int64_t>cx_get64(self._need(8, "hyper"))

    def unpack_uhyper(self) -> int:
        return cx_get64(self._need(8, "unsigned hyper"))

    def unpack_float(self) -> float:
        return <double>cx_u2f(cx_get32(self._need(4, "float")))

    def unpack_double(self) -> float:
        return cx_u2d(cx_get64(self._need(8, "double")))

    def unpack_quadruple(self) -> bytes:
        return self.unpack_fopaque(16)

    cdef inline const unsigned char *_take(self, Py_ssize_t n, str what) except NULL:
        cdef Py_ssize_t padded = n + ((-n) & 3)
        cdef const unsigned char *p = self._need(padded, what)
        return p

    def unpack_fopaque(self, Py_ssize_t n) -> bytes:
        if n < 0:
            raise XdrValueError(f"fixed opaque size must be >= 0, got {n}")
        cdef const unsigned char *p = self._take(n, "fixed opaque")
        return PyBytes_FromStringAndSize(<const char *>p, n)

    cdef inline Py_ssize_t _length(self, object maxlen, str what) except -1:
        cdef uint32_t n = cx_get32(self._need(4, what))
        if maxlen is not None and n > maxlen:
            self.pos -= 4
            raise XdrLengthError(f"{what} length {n} at offset {self.pos} exceeds the declared "
                                 f"maximum {maxlen}")
        return n

    def unpack_opaque(self, maxlen=None) -> bytes:
        cdef Py_ssize_t n = self._length(maxlen, "opaque")
        cdef const unsigned char *p = self._take(n, "opaque body")
        return PyBytes_FromStringAndSize(<const char *>p, n)

    def unpack_opaque_view(self, maxlen=None) -> memoryview:
        cdef Py_ssize_t n = self._length(maxlen, "opaque")
        cdef Py_ssize_t start = self.pos
        self._take(n, "opaque body")
        return self.buffer[start:start + n]

    def unpack_opaque_or_view(self, maxlen=None):
        """``opaque<maxlen>``: bytes, or when it has ``VIEW_MIN`` bytes or more and the input is
        immutable, a read-only memoryview into the input (no copy)."""
        cdef Py_ssize_t n = self._length(maxlen, "opaque")
        cdef Py_ssize_t start = self.pos
        cdef const unsigned char *p = self._take(n, "opaque body")
        if n >= _VIEW_MIN and self.immutable:
            return self.buffer[start:start + n]
        return PyBytes_FromStringAndSize(<const char *>p, n)

    def unpack_string(self, maxlen=None) -> str:
        cdef Py_ssize_t n = self._length(maxlen, "string")
        cdef const unsigned char *p = self._take(n, "string body")
        return PyUnicode_DecodeUTF8(<const char *>p, n, "surrogateescape")

    def unpack_int_array(self, maxlen=None, bint unsigned=False, fixed=None) -> list:
        """Counterpart of ``Packer.pack_int_array``."""
        cdef Py_ssize_t i, n
        cdef const unsigned char *p
        cdef list out
        n = fixed if fixed is not None else self.unpack_array_length(maxlen, 4)
        p = self._need(4 * n, "int array")
        out = [None] * n
        for i in range(n):
            if unsigned:
                out[i] = cx_get32(p + 4 * i)
            else:
                out[i] = <int32_t>cx_get32(p + 4 * i)
        return out

    def unpack_array_length(self, maxlen, Py_ssize_t min_item_size=4) -> int:
        """Read an array count, checked against ``maxlen`` and the bytes left."""
        cdef Py_ssize_t n = self._length(maxlen, "array")
        if min_item_size > 0 and n > (self.end - self.pos) // min_item_size:
            self.pos -= 4
            raise XdrTruncatedError(
                f"truncated XDR: array of {n} items needs at least {n * min_item_size} bytes "
                f"at offset {self.pos + 4}, {self.end - self.pos - 4} left")
        return n
