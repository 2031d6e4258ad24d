# cython: language_level=3
"""The copies between the application's host memory and the device, in Cython: host-to-device,
device-to-host, and the device-to-host copies deferred to the next synchronising call. Interface:
``cricket/_cext/copies.pxd``; pure-Python twin (same API, same calls on the wire; it documents
each method): ``cricket/client/copies.py``, whose methods also keep the list of deferred copies
here (a compiled method would gain nothing there).
"""
from cricket._cext import hostmem
from cricket.client import copies as _twin
from cricket.client import shm, shm_pinned
from cricket.client.direct import (
    COPY_CHUNK, PROC_DTOH, PROC_HTOD_ASYNC, dtoh_args, htod_buffers, receive_data_into,
)
from cricket.protocol import PROGRAM, VERSION

cdef Py_ssize_t CHUNK = COPY_CHUNK
cdef Py_ssize_t SHM_MIN = shm.MIN_COPY
cdef object DtohCopy = shm.DtohCopy
cdef object _pinned_htod = shm_pinned.htod
cdef object _pinned_dtoh = shm_pinned.dtoh
cdef object _view = hostmem.view
cdef object _read = hostmem.read
cdef object _Twin = _twin.Copies


cdef class Copies:
    # The bookkeeping of the deferred copies is not per call: the twin's own methods run it.
    def __init__(self, stats):
        _Twin.__init__(self, stats)

    def forked(self):
        _Twin.forked(self)

    def forget(self):
        _Twin.forget(self)

    cpdef htod(self, object conn, unsigned long long dst, size_t src, Py_ssize_t count,
               unsigned long long stream, bint sync):
        cdef Py_ssize_t off, done
        self.stats.bytes_htod += count
        if self.pending:
            self.settle_host_range(src, count)
        if sync and _pinned_htod(conn, dst, src, count, stream):
            return None
        if count >= SHM_MIN:
            done = shm.htod(conn, dst, _view(src, count), stream, sync)
            dst += done
            src += done
            count -= done
            if not count:
                return None
        if not sync:
            rpc = conn._rpc
            for off in range(0, count, CHUNK):
                data = _read(src + off, min(CHUNK, count - off))
                rpc.call_batched(PROGRAM, VERSION, PROC_HTOD_ASYNC,
                                 htod_buffers(dst + off, stream, memoryview(data)))
            return None
        conn._htod_sync(dst, stream, _view(src, count))
        return None

    cpdef dtoh(self, object conn, size_t dst, unsigned long long src, Py_ssize_t count,
               unsigned long long stream):
        if _pinned_dtoh(conn, dst, src, count, stream):
            self.stats.bytes_dtoh += count
            return None
        if count >= SHM_MIN or count > CHUNK:
            if shm.dtoh(conn, _view(dst, count), src, stream):
                self.stats.bytes_dtoh += count
                return None
            return self.dtoh_finish(self.dtoh_start(conn, dst, src, count, stream))
        self.stats.bytes_dtoh += count
        reply = conn._rpc.call(PROGRAM, VERSION, PROC_DTOH, [dtoh_args(src, count, stream)])
        conn._data_reply(reply, _view(dst, count), count)
        return None

    cpdef object dtoh_start(self, object conn, size_t dst, unsigned long long src, Py_ssize_t count,
                            unsigned long long stream):
        cdef Py_ssize_t off
        cdef list calls = []
        self.stats.bytes_dtoh += count
        if count >= SHM_MIN:
            copy = shm.start_dtoh(conn, _view(dst, count), src, stream)
            if copy:
                return copy
        rpc = conn._rpc
        for off in range(0, count, CHUNK):
            calls.append(rpc.start(PROGRAM, VERSION, PROC_DTOH,
                                   [dtoh_args(src + off, min(CHUNK, count - off), stream)]))
        return conn, calls, dst, count

    cpdef dtoh_finish(self, object started):
        cdef Py_ssize_t i, n, count
        cdef size_t dst
        if isinstance(started, DtohCopy):
            return started.finish()
        conn, calls, dst, count = started
        for i in range(len(calls)):
            n = min(CHUNK, count - i * CHUNK)
            view = _view(dst + i * CHUNK, n)
            reply = receive_data_into(calls[i], view)
            if reply is not None:
                conn._data_reply(reply, view, n)
        return None

    def defer(self, started, dst, count):
        return _Twin.defer(self, started, dst, count)

    def mark_event(self, event):
        _Twin.mark_event(self, event)

    cpdef settle_host_range(self, size_t address, Py_ssize_t count):
        cdef size_t dst, end = address + count
        cdef Py_ssize_t n
        for entry in self.pending:
            dst = entry[2]
            n = entry[3]
            if dst < end and address < dst + n:
                self.finish_deferred()
                return None
        return None

    def finish_deferred(self, before=None):
        _Twin.finish_deferred(self, before)
