# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The XDR (RFC 4506) buffer library: a C write buffer ``W`` and a checked C read cursor ``R``.

``cext/xdr.pyx`` (``Packer``/``Unpacker``) and every codec rpcgen generates (``--cython``)
``cimport`` this file; it holds no Python objects of its own, so it needs no module at run time.
Lengths are checked against the declared maximum and the bytes left before anything is allocated.
Errors are the ``cricket.xdr.errors`` classes, looked up only when one is raised.
"""
from cpython.buffer cimport PyObject_GetBuffer, PyBuffer_Release, PyBUF_SIMPLE
from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.list cimport PyList_New, PyList_SET_ITEM, PyList_GET_ITEM, PyList_GET_SIZE
from cpython.mem cimport PyMem_Malloc, PyMem_Realloc, PyMem_Free
from cpython.ref cimport PyObject, Py_INCREF
from cpython.unicode cimport PyUnicode_DecodeUTF8
from cpython.exc cimport PyErr_Occurred, PyErr_Clear
from libc.stdint cimport int32_t, uint32_t, int64_t, uint64_t, INT64_MIN, INT64_MAX
from libc.string cimport memcpy, memset
from libc.math cimport isfinite, fabs

cdef extern from "Python.h":
    # declared without an exception spec: callers check -1 + PyErr_Occurred themselves,
    # which costs nothing per item (a try block would save exception state each time)
    long long PyLong_AsLongLong(object) noexcept


cdef inline object _errors():
    """The ``cricket.xdr.errors`` module (imported on the error path only)."""
    import cricket.xdr.errors
    return cricket.xdr.errors


cdef extern from *:
    """
    static inline void xdr_put32(char *p, uint32_t v) {
        p[0] = (char)(v >> 24); p[1] = (char)(v >> 16); p[2] = (char)(v >> 8); p[3] = (char)v;
    }
    static inline uint32_t xdr_get32(const unsigned char *p) {
        return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
    }
    static inline void xdr_put64(char *p, uint64_t v) {
        xdr_put32(p, (uint32_t)(v >> 32)); xdr_put32(p + 4, (uint32_t)v);
    }
    static inline uint64_t xdr_get64(const unsigned char *p) {
        return ((uint64_t)xdr_get32(p) << 32) | xdr_get32(p + 4);
    }
    static inline uint32_t xdr_f2u(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
    static inline float xdr_u2f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
    static inline uint64_t xdr_d2u(double d) { uint64_t u; memcpy(&u, &d, 8); return u; }
    static inline double xdr_u2d(uint64_t u) { double d; memcpy(&d, &u, 8); return d; }
    #define XDR_FLT_MAX 3.40282346638528859811704183484516925e+38
    /* Room for k more bytes after the n written: the write buffer grows out of line, so the
       encoders that may grow it stay small and fast. The first buffer (small) is the caller's. */
    static __attribute__((noinline)) char *xdr_grow(char **buf, Py_ssize_t *cap, Py_ssize_t n,
                                                    const char *small, Py_ssize_t k) {
        Py_ssize_t c = *cap >= 128 ? *cap * 2 : 256;
        char *nb;
        while (c < n + k) c *= 2;
        if (*buf == small) {
            nb = (char *)PyMem_Malloc(c);
            if (nb != NULL && n) memcpy(nb, small, n);
        } else {
            nb = (char *)PyMem_Realloc(*buf, c);
        }
        if (nb == NULL) { PyErr_NoMemory(); return NULL; }
        *buf = nb;
        *cap = c;
        return nb + n;
    }
    /* Decoded ints below XDR_INT_TABLE are shared objects, made on first use and kept (ints are
       immutable; CPython shares -5..256 the same way): an int<N> of counts, sizes or handles then
       decodes without an allocation per item. Values outside the table are new ints. */
    #define XDR_INT_TABLE 65536
    static PyObject *xdr_int_table[XDR_INT_TABLE];
    static inline PyObject *xdr_new_int(int64_t x) {
        PyObject *o;
        if ((uint64_t)x >= XDR_INT_TABLE) return PyLong_FromLongLong(x);
        o = xdr_int_table[x];
        if (o == NULL) {
            o = PyLong_FromLongLong(x);
            if (o == NULL) return NULL;
            xdr_int_table[x] = o;
        }
        Py_INCREF(o);
        return o;
    }
    /* Fills the new list ``out`` with n big-endian ints from p: 0, -1 (no memory), or 1 with *bad
       the first value outside [lo, hi]. The caller checked the n * 4 bytes are there. */
    static int xdr_fill_ints(PyObject *out, const unsigned char *p, Py_ssize_t n, int is_signed,
                             int64_t lo, int64_t hi, int64_t *bad) {
        Py_ssize_t i;
        for (i = 0; i < n; i++) {
            uint32_t u = xdr_get32(p + 4 * i);
            int64_t x = is_signed ? (int64_t)(int32_t)u : (int64_t)u;
            PyObject *o;
            if (x < lo || x > hi) { *bad = x; return 1; }
            o = xdr_new_int(x);
            if (o == NULL) return -1;
            PyList_SET_ITEM(out, i, o);
        }
        return 0;
    }
    /* Calls an error path out of line: the encoders that may take it stay small and fast. */
    typedef int (*xdr_bad_int_fn)(PyObject *, int64_t, int64_t, PyObject *);
    static __attribute__((noinline)) int xdr_cold_bad_int(xdr_bad_int_fn f, PyObject *v, int64_t lo,
                                                          int64_t hi, PyObject *what) {
        return f(v, lo, hi, what);
    }
    """
    void xdr_put32(char *p, uint32_t v) nogil
    uint32_t xdr_get32(const unsigned char *p) nogil
    void xdr_put64(char *p, uint64_t v) nogil
    uint64_t xdr_get64(const unsigned char *p) nogil
    uint32_t xdr_f2u(float f) nogil
    float xdr_u2f(uint32_t u) nogil
    uint64_t xdr_d2u(double d) nogil
    double xdr_u2d(uint64_t u) nogil
    double XDR_FLT_MAX
    ctypedef int (*xdr_bad_int_fn)(object, int64_t, int64_t, str) except -1
    char *xdr_grow(char **buf, Py_ssize_t *cap, Py_ssize_t n, const char *small, Py_ssize_t k) except NULL
    int xdr_cold_bad_int(xdr_bad_int_fn f, object v, int64_t lo, int64_t hi, str what) except -1
    int xdr_fill_ints(object out, const unsigned char *p, Py_ssize_t n, bint is_signed, int64_t lo,
                      int64_t hi, int64_t *bad) except -1

cdef enum:
    ZERO_COPY_MIN = 16384   # opaques this large go to a sink Packer as uncopied segments
    VIEW_MIN = 65536        # opaques this large may decode as views (cricket.xdr.VIEW_MIN)
    SMALL = 512             # the stack buffer a generated encoder starts with
    NO_MAX = -1             # no declared maximum length


# -- write buffer ------------------------------------------------------------------------
cdef struct W:
    char *buf
    Py_ssize_t n
    Py_ssize_t cap
    char *small         # the first buffer, the caller's (never freed), or NULL
    PyObject *sink      # a cricket.xdr.Packer (P_T) for zero-copy opaques, or NULL


cdef inline void _w_init(W *w, char *small, Py_ssize_t size, object sink):
    """Start ``w`` in the caller's ``small`` buffer of ``size`` bytes (NULL, 0: none yet)."""
    w.buf = small
    w.small = small
    w.n = 0
    w.cap = size
    w.sink = <PyObject *>sink if sink is not None else NULL


cdef inline void _w_free(W *w):
    if w.buf != w.small:
        PyMem_Free(w.buf)
    w.buf = w.small


cdef inline char *_w_room(W *w, Py_ssize_t k) except NULL:
    if w.n + k <= w.cap:
        return w.buf + w.n
    return xdr_grow(&w.buf, &w.cap, w.n, w.small, k)


cdef inline int _w_u32(W *w, uint32_t v) except -1:
    xdr_put32(_w_room(w, 4), v)
    w.n += 4
    return 0


cdef inline int _w_u64(W *w, uint64_t v) except -1:
    xdr_put64(_w_room(w, 8), v)
    w.n += 8
    return 0


cdef inline int _raise_bad_int(object v, int64_t lo, int64_t hi, str what) except -1:
    if isinstance(v, int):
        raise _errors().XdrValueError(f"{v} is out of range for {what} [{lo}, {hi}]")
    raise _errors().XdrValueError(f"{what} needs an int, got {type(v).__name__}")


cdef inline int _bad_int(object v, int64_t lo, int64_t hi, str what) except -1:
    return xdr_cold_bad_int(_raise_bad_int, v, lo, hi, what)


cdef inline int64_t _int_in(object v, int64_t lo, int64_t hi, str what) except? -1:
    """``v`` as a C integer in [lo, hi]; XdrValueError otherwise."""
    cdef int64_t x
    if not isinstance(v, int):
        return _bad_int(v, lo, hi, what)
    x = PyLong_AsLongLong(v)
    if x < lo or x > hi or (x == -1 and PyErr_Occurred() != NULL):
        PyErr_Clear()
        return _bad_int(v, lo, hi, what)
    return x


cdef inline int _w_int(W *w, object v, int64_t lo, int64_t hi, str what) except -1:
    return _w_u32(w, <uint32_t>_int_in(v, lo, hi, what))


cdef inline int _w_hyper(W *w, object v) except -1:
    cdef int64_t x
    if not isinstance(v, int):
        return _bad_int(v, INT64_MIN, INT64_MAX, "hyper")
    x = PyLong_AsLongLong(v)
    if x == -1 and PyErr_Occurred() != NULL:
        PyErr_Clear()
        return _bad_int(v, INT64_MIN, INT64_MAX, "hyper")
    return _w_u64(w, <uint64_t>x)


cdef inline int _w_uhyper(W *w, object v) except -1:
    cdef uint64_t x
    if not isinstance(v, int) or v < 0:
        raise _errors().XdrValueError(f"unsigned hyper needs an int in [0, 2**64-1], got {v!r}")
    try:
        x = v
    except OverflowError:
        raise _errors().XdrValueError(f"{v} is out of range for unsigned hyper") from None
    return _w_u64(w, x)


cdef inline int _w_bool(W *w, object v) except -1:
    return _w_u32(w, 1 if v else 0)


cdef inline int _w_float(W *w, object v) except -1:
    cdef double d
    try:
        d = v
    except TypeError:
        raise _errors().XdrValueError(f"float needs a number, got {type(v).__name__}") from None
    if isfinite(d) and fabs(d) > XDR_FLT_MAX:
        raise _errors().XdrValueError(f"{v!r} is too large for an XDR float")
    return _w_u32(w, xdr_f2u(<float>d))


cdef inline int _w_double(W *w, object v) except -1:
    cdef double d
    try:
        d = v
    except TypeError:
        raise _errors().XdrValueError(f"double needs a number, got {type(v).__name__}") from None
    return _w_u64(w, xdr_d2u(d))


cdef inline int _w_flush(W *w) except -1:
    """Hand the bytes written so far to the sink Packer."""
    if w.n:
        (<object>w.sink).pack_raw(PyBytes_FromStringAndSize(w.buf, w.n))
        w.n = 0
    return 0


cdef inline int _w_bytes(W *w, object data, Py_ssize_t fixed, Py_ssize_t maxlen, bint counted) except -1:
    """Opaque data: ``fixed`` >= 0 for opaque[fixed], else counted (opaque<maxlen>)."""
    cdef Py_buffer view
    cdef Py_ssize_t n, pad
    cdef char *p
    if isinstance(data, str):
        data = (<str>data).encode("utf-8", "surrogateescape")
    try:
        PyObject_GetBuffer(data, &view, PyBUF_SIMPLE)
    except TypeError:
        raise _errors().XdrValueError(f"opaque data must be bytes-like, not {type(data).__name__}") from None
    try:
        n = view.len
        if fixed >= 0 and n != fixed:
            raise _errors().XdrValueError(f"opaque[{fixed}] got {n} bytes")
        if maxlen >= 0 and n > maxlen:
            raise _errors().XdrLengthError(f"opaque/string of length {n} exceeds the declared maximum {maxlen}")
        if counted and n > 0xFFFFFFFF:
            raise _errors().XdrLengthError(f"opaque of {n} bytes is longer than XDR allows")
        if n >= ZERO_COPY_MIN and w.sink != NULL and counted:
            _w_flush(w)
            (<object>w.sink).pack_opaque(data)
            return 0
        pad = (-n) & 3
        p = _w_room(w, n + pad + 4)
        if counted:
            xdr_put32(p, <uint32_t>n)
            p += 4
            w.n += 4
        memcpy(p, view.buf, n)
        memset(p + n, 0, pad)
        w.n += n + pad
    finally:
        PyBuffer_Release(&view)
    return 0


cdef inline int _w_count(W *w, object seq, Py_ssize_t maxlen) except -1:
    cdef Py_ssize_t n = len(seq)
    if maxlen >= 0 and n > maxlen:
        raise _errors().XdrLengthError(f"array of length {n} exceeds the declared maximum {maxlen}")
    return _w_u32(w, <uint32_t>n)


cdef inline int _w_fixed_count(object seq, Py_ssize_t size) except -1:
    if len(seq) != size:
        raise _errors().XdrValueError(f"fixed array needs {size} items, got {len(seq)}")
    return 0


cdef inline int _w_int_list(W *w, object seq, Py_ssize_t maxlen, int64_t lo, int64_t hi, str what,
                     bint counted) except -1:
    """An array of int/unsigned: one reservation, no per-item Python calls for lists."""
    cdef Py_ssize_t i, n
    cdef char *p
    cdef int64_t x
    cdef object item
    if type(seq) is not list:
        seq = list(seq)
    n = PyList_GET_SIZE(seq)
    if counted:
        if maxlen >= 0 and n > maxlen:
            raise _errors().XdrLengthError(f"array of length {n} exceeds the declared maximum {maxlen}")
    elif n != maxlen:
        raise _errors().XdrValueError(f"fixed array needs {maxlen} items, got {n}")
    p = _w_room(w, 4 * n + 4)
    if counted:
        xdr_put32(p, <uint32_t>n)
        p += 4
    for i in range(n):
        # _int_in written out: a tenth faster per item here than the call (measured)
        item = <object>PyList_GET_ITEM(seq, i)
        if not isinstance(item, int):
            return _bad_int(item, lo, hi, what)
        x = PyLong_AsLongLong(item)
        if x < lo or x > hi or (x == -1 and PyErr_Occurred() != NULL):
            PyErr_Clear()
            return _bad_int(item, lo, hi, what)
        xdr_put32(p, <uint32_t>x)
        p += 4
    w.n += 4 * n + (4 if counted else 0)
    return 0


# -- read cursor -------------------------------------------------------------------------
cdef struct R:
    const unsigned char *buf
    Py_ssize_t pos
    Py_ssize_t end
    PyObject *owner     # the input, when views into it are safe (immutable bytes), else NULL


cdef inline int _truncated(R *r, Py_ssize_t k, str what) except -1:
    raise _errors().XdrTruncatedError(f"truncated XDR: {what} needs {k} bytes at offset {r.pos}, "
                            f"{r.end - r.pos} left")


cdef inline const unsigned char *_r_take(R *r, Py_ssize_t k, str what) except NULL:
    cdef const unsigned char *p
    if r.end - r.pos < k:
        _truncated(r, k, what)
    p = r.buf + r.pos
    r.pos += k
    return p


cdef inline uint32_t _r_u32(R *r, str what) except? 0xFFFFFFFF:
    return xdr_get32(_r_take(r, 4, what))


cdef inline object _r_int(R *r):
    return <int32_t>xdr_get32(_r_take(r, 4, "int"))


cdef inline object _r_uint(R *r):
    return xdr_get32(_r_take(r, 4, "unsigned int"))


cdef inline object _r_ranged(R *r, int64_t lo, int64_t hi, bint signed, str what):
    cdef uint32_t u = xdr_get32(_r_take(r, 4, what))
    cdef int64_t x = <int32_t>u if signed else <int64_t>u
    if x < lo or x > hi:
        r.pos -= 4
        raise _errors().XdrValueError(f"{x} is out of range for {what} [{lo}, {hi}]")
    return x


cdef inline object _r_hyper(R *r):
    cdef const unsigned char *p = _r_take(r, 8, "hyper")
    return <int64_t>(((<uint64_t>xdr_get32(p)) << 32) | xdr_get32(p + 4))


cdef inline object _r_uhyper(R *r):
    cdef const unsigned char *p = _r_take(r, 8, "unsigned hyper")
    return ((<uint64_t>xdr_get32(p)) << 32) | xdr_get32(p + 4)


cdef inline object _r_float(R *r):
    return <double>xdr_u2f(xdr_get32(_r_take(r, 4, "float")))


cdef inline object _r_double(R *r):
    cdef const unsigned char *p = _r_take(r, 8, "double")
    return xdr_u2d(((<uint64_t>xdr_get32(p)) << 32) | xdr_get32(p + 4))


cdef inline object _r_bool(R *r):
    cdef uint32_t v = xdr_get32(_r_take(r, 4, "bool"))
    if v > 1:
        r.pos -= 4
        raise _errors().XdrDiscriminantError(f"bool must be 0 or 1, got {v}")
    return v == 1


cdef inline Py_ssize_t _r_length(R *r, Py_ssize_t maxlen, str what) except -1:
    cdef uint32_t n = xdr_get32(_r_take(r, 4, what))
    if maxlen >= 0 and n > <uint64_t>maxlen:
        r.pos -= 4
        raise _errors().XdrLengthError(f"{what} length {n} at offset {r.pos} exceeds the declared "
                             f"maximum {maxlen}")
    return n


cdef inline Py_ssize_t _r_count(R *r, Py_ssize_t maxlen, Py_ssize_t min_item) except -1:
    cdef Py_ssize_t n = _r_length(r, maxlen, "array")
    if min_item > 0 and n > (r.end - r.pos) // min_item:
        r.pos -= 4
        raise _errors().XdrTruncatedError(f"truncated XDR: array of {n} items needs at least "
                                f"{n * min_item} bytes at offset {r.pos + 4}, "
                                f"{r.end - r.pos - 4} left")
    return n


cdef inline object _r_fopaque(R *r, Py_ssize_t n):
    cdef const unsigned char *p = _r_take(r, (n + 3) & ~3, "fixed opaque")
    return PyBytes_FromStringAndSize(<const char *>p, n)


cdef inline object _r_opaque(R *r, Py_ssize_t maxlen):
    cdef Py_ssize_t n = _r_length(r, maxlen, "opaque")
    cdef const unsigned char *p = _r_take(r, (n + 3) & ~3, "opaque body")
    return PyBytes_FromStringAndSize(<const char *>p, n)


cdef inline object _r_opaque_or_view(R *r, Py_ssize_t maxlen):
    """opaque<maxlen>: a read-only view into the input when it is VIEW_MIN bytes or more and the
    input is immutable (it can never change under the view), else bytes."""
    cdef Py_ssize_t n = _r_length(r, maxlen, "opaque")
    cdef Py_ssize_t start = r.pos
    cdef const unsigned char *p = _r_take(r, (n + 3) & ~3, "opaque body")
    if n >= VIEW_MIN and r.owner != NULL:
        return memoryview(<object>r.owner)[start:start + n]
    return PyBytes_FromStringAndSize(<const char *>p, n)


cdef inline object _r_string(R *r, Py_ssize_t maxlen):
    cdef Py_ssize_t n = _r_length(r, maxlen, "string")
    cdef const unsigned char *p = _r_take(r, (n + 3) & ~3, "string body")
    return PyUnicode_DecodeUTF8(<const char *>p, n, "surrogateescape")


cdef inline object _r_int_list(R *r, Py_ssize_t n, bint signed, int64_t lo, int64_t hi, str what):
    """``n`` ints/unsigneds into a new list (length already checked against the input): one bounds
    check for the array, no Python call per item."""
    cdef const unsigned char *p = _r_take(r, 4 * n, what)
    cdef list out = PyList_New(n)
    cdef int64_t bad = 0
    if xdr_fill_ints(out, p, n, signed, lo, hi, &bad):
        r.pos -= 4 * n
        raise _errors().XdrValueError(f"{bad} is out of range for {what} [{lo}, {hi}]")
    return out
