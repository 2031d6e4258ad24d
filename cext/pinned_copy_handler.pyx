# cython: language_level=3, boundscheck=False, wraparound=False
"""The handlers of ``CR_MEMCPY_HTOD_PINNED`` and ``CR_MEMCPY_DTOH_PINNED`` in C: the session from
the call's connection, the quick rule, the checks of ``shm.memcpy_*_pinned`` in their order and,
when they all pass on the default stream, one ``memcpy`` between the pinned region's mapping and
the device memory where the backend gives its host address (``Device.host_address``), else the
device's copy method. A failing check runs the service function itself, which says why; a call the
quick rule does not allow is the program's ``_call``. Pure-Python twin, same API and behaviour
(read it for the rules): ``cricket/server/pinned_copy_handler.py``.
"""
from cpython.contextvars cimport get_value
from cpython.dict cimport PyDict_GetItem, PyDict_SetItem
from cpython.ref cimport PyObject
from libc.stdint cimport uint64_t, uintptr_t
from libc.string cimport memcpy
from posix.time cimport CLOCK_MONOTONIC, clock_gettime, timespec

from sorted_search cimport bisect_right_u64

from cricket.protocol import gen as P
from cricket.rpc import current_connection_id
from cricket.rpc.context import _current
from cricket.server import shm
from cricket.server.stats import LATENCY_BUCKETS

cdef object _HTOD_NAME = "memcpy_htod_pinned"
cdef object _DTOH_NAME = "memcpy_dtoh_pinned"
cdef tuple _HTOD_MOVED = ("htod", "shm")
cdef tuple _DTOH_MOVED = ("dtoh", "shm")


cdef enum:
    MAX_BUCKETS = 64
cdef double _bounds[MAX_BUCKETS]       # LATENCY_BUCKETS, as C doubles
cdef Py_ssize_t _nbounds = len(LATENCY_BUCKETS)
assert _nbounds <= MAX_BUCKETS
for _i, _b in enumerate(LATENCY_BUCKETS):
    _bounds[_i] = _b


cdef void _observe(object stats, object name, double seconds) except *:
    """``stats.observe(name, seconds)`` (ServerStats) without a Python call once the procedure
    has its histogram: its bucket (``bisect_left`` of the bounds) and its sum."""
    cdef PyObject *found = PyDict_GetItem(stats.latency, name)
    cdef Py_ssize_t lo = 0, hi = _nbounds, mid
    if found == NULL:
        stats.observe(name, seconds)
        return
    latency = <object>found
    while lo < hi:
        mid = (lo + hi) // 2
        if _bounds[mid] < seconds:
            lo = mid + 1
        else:
            hi = mid
    counts = <list?>latency.counts
    counts[lo] = counts[lo] + 1
    latency.sum = latency.sum + seconds


cdef object _allocation_holding(object allocations, uint64_t ptr, uint64_t size):
    """``Allocations.check(ptr, size)`` without a Python call: the base of the session's
    allocation that holds [ptr, ptr+size), or None (``check`` then says why)."""
    cdef list bases = <list?>allocations._bases
    cdef Py_ssize_t lo = bisect_right_u64(bases, ptr)
    cdef uint64_t base, held
    if lo == 0:
        return None
    found = bases[lo - 1]
    base = found
    held = (<dict?>allocations._sizes)[found]
    if ptr - base > held or size > held - (ptr - base):
        return None
    return found


cdef inline double _now() noexcept:
    """``time.perf_counter()`` (CLOCK_MONOTONIC on Linux), without a Python call."""
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return <double>ts.tv_sec + <double>ts.tv_nsec * 1e-9


cdef inline void _add(object counter, object key, object n) except *:
    """``counter[key] += n`` for a ``Counter`` (a dict: a missing key counts from 0)."""
    cdef PyObject *old = PyDict_GetItem(counter, key)
    PyDict_SetItem(counter, key, n if old == NULL else <object>old + n)


cdef class PinnedCopies:
    """The two handlers of one ``CricketProgram``; ``quick_attr`` and ``most``: its quick rule for
    these copies (the backend attribute that allows them, the largest size)."""

    cdef readonly object program
    cdef readonly dict sessions
    cdef readonly object stats
    cdef readonly object quick_attr
    cdef readonly object most
    cdef readonly object ok

    def __init__(self, program, quick_attr, most, ok):
        self.program = program
        self.sessions = program.sessions
        self.stats = program.service.stats
        self.quick_attr = quick_attr
        self.most = most
        self.ok = ok

    def htod(self, a):
        """CR_MEMCPY_HTOD_PINNED."""
        return self._copy(a, True)

    def dtoh(self, a):
        """CR_MEMCPY_DTOH_PINNED."""
        return self._copy(a, False)

    cdef object _copy(self, a, bint htod):
        cdef PyObject *found
        cdef double started
        fn = shm.memcpy_htod_pinned if htod else shm.memcpy_dtoh_pinned
        number, ptr, stream, offset, size = a.region, a.device, a.stream, a.offset, a.size
        call = get_value(_current)
        if call is None:
            current_connection_id()             # raises: outside of an RPC handler
        found = PyDict_GetItem(self.sessions, (<tuple?>call)[0].id)
        session = <object>found if found != NULL else None
        if (session is None or session.queued or stream != 0 or size > self.most
                or not getattr(session.backend, self.quick_attr, False)):
            return self.program._call(P.cr_status_res, fn, number, ptr, stream, offset, size,
                                      moved=("htod" if htod else "dtoh", "shm", size))
        name = _HTOD_NAME if htod else _DTOH_NAME
        _add(session.counters, name, 1)
        started = _now()
        try:
            if not _fast(session, htod, number, ptr, offset, size):
                fn(session, number, ptr, stream, offset, size)
        except Exception as exc:
            return self.program._failed(session, P.cr_status_res, fn, exc)
        finally:
            _observe(self.stats, name, _now() - started)
        _add(session.stats.copied, _HTOD_MOVED if htod else _DTOH_MOVED, size)    # SessionStats.moved
        return self.ok


cdef bint _fast(session, bint htod, number, ptr, offset, size) except -1:
    """Copy when every check passes (True); False: the service function must run (and says why)."""
    cdef uint64_t off, n, region_size, header, device_ptr
    cdef uintptr_t host, device_host
    if session.backend is None or not htod and session.async_error is not None:
        return False
    regions = session.pinned_regions
    if regions is None:
        return False
    region = (<dict?>regions.regions).get(number)
    if region is None:
        return False
    try:        # an XDR unsigned hyper each: 0 .. 2**64 - 1
        off, n, device_ptr = offset, size, ptr
    except OverflowError:
        return False
    region_size, header = region.size, region.header
    if off < header or n > region_size or off > region_size - n:
        return False
    base = _allocation_holding(session.allocations, device_ptr, n)
    if base is None:
        return False
    device = session._device_at(base)       # the stand-in rule of Session.device_for
    address = device.host_address(ptr, size)
    host = region.address
    host += off
    if address is None:
        if htod:
            device.memcpy_htod_host(ptr, region.view[offset:offset + size], host)
        else:
            device.memcpy_dtoh_host(ptr, region.view[offset:offset + size], host)
        return True
    device_host = address
    if htod:
        memcpy(<void *>device_host, <const void *>host, n)
    else:
        memcpy(<void *>host, <const void *>device_host, n)
    return True
