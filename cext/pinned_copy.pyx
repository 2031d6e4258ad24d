# cython: language_level=3
"""cudaMemcpy's entry in C: a synchronous copy between pinned memory the server maps and the device,
in the plain case, from the shim's argument words to the encoded call and the compiled call path
with no Python frame. Pure-Python twin (same API; it states the plain case):
``cricket/client/pinned_copy.py``. Every other case runs the implementation behind the guard
(``RuntimeCall``), as the pure face does.
"""
from cpython.buffer cimport PyBUF_SIMPLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from libc.stdint cimport uint32_t, uint64_t
from libc.string cimport memcmp

from cricket._cext.copies cimport Copies
from cricket._cext.rpc_call cimport CallPath
from sorted_search cimport bisect_right_u64
from cricket._cext.runtime_guard cimport RuntimeCall, ints_as_words, words_tuple
from cricket.protocol._cricket_layout cimport (
    cr_pinned_copy_args_FIXED_SIZE, put_cr_pinned_copy_args_fixed,
)

from cricket.client import runtime_guard as _guard
from cricket.client import shm_pinned
from cricket.client.single_server import SingleServer
from cricket.client.windows import D2H as _D2H, H2D as _H2D
from cricket.protocol import PROGRAM as _PROGRAM, VERSION as _VERSION
from cricket.protocol import gen as P

cdef object _failed = _guard.failed
cdef object _SingleServer = SingleServer
cdef object _unpack_status = P.unpack_cr_status_res
cdef bytes _STATUS_OK = shm_pinned.STATUS_OK
cdef uint64_t PART = shm_pinned.PART
cdef unsigned int PROC_HTOD = shm_pinned.PROC_HTOD
cdef unsigned int PROC_DTOH = shm_pinned.PROC_DTOH
cdef unsigned int PROGRAM = _PROGRAM
cdef unsigned int VERSION = _VERSION
cdef uint64_t H2D = _H2D
cdef uint64_t D2H = _D2H

cdef enum:
    WORDS = 4


cdef bint _succeeded(object reply) except -1:
    """The reply is the shared success status (``shm_pinned.STATUS_OK``)."""
    cdef Py_buffer view
    cdef bint same
    PyObject_GetBuffer(reply, &view, PyBUF_SIMPLE)
    try:
        same = (view.len == PyBytes_GET_SIZE(_STATUS_OK)
                and memcmp(view.buf, PyBytes_AS_STRING(_STATUS_OK), view.len) == 0)
    finally:
        PyBuffer_Release(&view)
    return same


cdef class _Session:
    """What a session holds for its life (a session is never reused: a new one is a new object):
    its pinned table and that table's dict, its printf output, its RPC client and the client's
    call path; and the runtime's parts, never replaced. Swapped whole, so that a thread reads one
    session's parts."""
    cdef object conn
    cdef object table
    cdef dict by_address
    cdef object output
    cdef object rpc
    cdef object path
    cdef object mapped
    cdef object copies
    cdef object stats


cdef class _Found:
    """A pinned allocation found in the table's ``index`` (sorted bases, their mappings), which the
    table replaces whole at every change: valid while the index is the same."""
    cdef object index
    cdef uint64_t base
    cdef uint64_t length
    cdef uint32_t region


cdef _Found _find(tuple index, uint64_t host, uint64_t count):
    """The pinned allocation holding ``[host, host + count)``, or None."""
    cdef Py_ssize_t lo = bisect_right_u64(<list?>index[0], host)
    cdef uint64_t base, length
    if lo == 0:
        return None
    m = (<list>index[1])[lo - 1]
    base = m.address
    length = m.length
    if host - base > length or count > length - (host - base):     # (cannot wrap)
        return None
    cdef _Found found = _Found.__new__(_Found)
    found.index = index
    found.base = base
    found.length = length
    found.region = m.region
    return found


cdef class PinnedMemcpy(RuntimeCall):
    """See the twin, ``cricket.client.pinned_copy.PinnedMemcpy``."""
    cdef _Session _session      # the parts of the runtime's session, taken at its first copy
    cdef _Found _found          # the pinned allocation the last copy named

    cdef object call_ints(self, tuple args):
        cdef uint64_t words[WORDS]
        if len(args) != WORDS or not ints_as_words(args, words, WORDS):
            return RuntimeCall.call_ints(self, args)
        return self.call(words, WORDS)

    cdef int slow(self, const uint64_t *args, int nargs) except? -1:
        return RuntimeCall.call_ints(self, words_tuple(args, nargs))

    cdef int call(self, const uint64_t *args, int nargs) except? -1:
        if nargs != WORDS:
            return self.slow(args, nargs)
        cdef uint64_t count = args[2], kind = args[3], host, device
        cdef _Session s
        cdef _Found f
        rt = self.runtime
        if (rt.no_device or rt.multi_device or count == 0 or count > PART
                or (kind != H2D and kind != D2H)):
            return self.slow(args, nargs)
        conn = rt._conn
        s = self._session
        if s is None or conn is not s.conn:
            if conn is None:
                return self.slow(args, nargs)
            s = self._take(conn)
        if not s.by_address:                    # no pinned memory the server maps: nothing to find
            return self.slow(args, nargs)
        if kind == H2D:
            host, device = args[1], args[0]
        else:
            host, device = args[0], args[1]
        index = s.table.index
        f = self._found
        if f is None or not (index is f.index and f.base <= host and host - f.base <= f.length
                             and count <= f.length - (host - f.base)):
            f = _find(index, host, count)
            if f is None:
                return self.slow(args, nargs)
            self._found = f
        mapped = s.mapped
        if mapped.ranges or mapped.device_dirty or type(rt.route) is not _SingleServer:
            return self.slow(args, nargs)
        copies = s.copies
        if type(copies) is Copies:
            if (<Copies>copies).pending or (<Copies>copies).draining:
                return self.slow(args, nargs)
        elif copies.pending or copies.draining:
            return self.slow(args, nargs)
        if s.output.armed:
            return self.slow(args, nargs)
        try:
            _copy(s, rt, kind, device, host - f.base, f.region, count)
        except Exception as exc:
            return _failed(self, exc)
        return 0

    cdef _Session _take(self, object conn):
        cdef _Session s = _Session.__new__(_Session)
        rt = self.runtime
        s.conn = conn
        s.table = conn.pinned_table
        s.by_address = s.table.by_address
        s.output = conn.output
        s.rpc = conn._rpc
        s.path = s.rpc._path
        s.mapped = rt.mapped_memory
        s.copies = rt.copies
        s.stats = rt.stats
        self._session = s
        return s


cdef _copy(_Session s, object rt, uint64_t kind, uint64_t device, uint64_t offset, uint32_t region,
           uint64_t count):
    """The twin's ``copy``: one call, its bytes counted, its failure raised."""
    cdef bytes packed = PyBytes_FromStringAndSize(NULL, cr_pinned_copy_args_FIXED_SIZE)
    cdef unsigned int proc = PROC_HTOD if kind == H2D else PROC_DTOH
    put_cr_pinned_copy_args_fixed(PyBytes_AS_STRING(packed), region, device, 0, offset, count)
    if kind == H2D:
        s.stats.bytes_htod += count
    rpc = s.rpc
    reply = None
    if type(s.path) is CallPath and not rpc._batch and rpc._error is None:
        # rpc.Client.call's own first step (nothing batched to go first), without its frame
        reply = (<CallPath>s.path).call(PROGRAM, VERSION, proc, (packed,))
    if reply is None:
        reply = rpc.call(PROGRAM, VERSION, proc, [packed])
    if not _succeeded(reply):
        s.conn._check(_unpack_status(reply), "cuMemcpyHtoD" if kind == H2D else "cuMemcpyDtoH")
    if kind == D2H:
        s.stats.bytes_dtoh += count
    if s.mapped.device_dirty:       # another thread's launch since the check
        rt.synchronized()
