# cython: language_level=3
"""The runtime calls a process answers from what it holds, in C: the entries
``cext/cudart_api.pyx`` calls with the shim's argument words. Pure-Python twin (same API,
documented there): ``cricket/client/runtime_local.py``.

Each entry answers itself while the runtime is in its common state, the one the guard's fast path
takes (a device is visible and no thread has chosen a device other than the session's), reading
what the Runtime keeps up to date: its session's device list (``_conn.devices``, HELLO's snapshot),
the session's current device (``_server_device``) and the calling thread's ``device`` and
``last_error``. In every other state, and for arguments the shim never passes, it runs the twin's
implementation behind the guard (``RuntimeCall``), as the pure face does.
"""
from libc.stdint cimport int32_t, uint64_t

from cricket._cext.runtime_guard cimport Entry, RuntimeCall, ints_as_words, words_tuple

from cricket.client import runtime_local as _twin
from cricket.client.errors import ERR_INVALID_DEVICE as _ERR_INVALID_DEVICE
from cricket.client.errors import ERR_INVALID_VALUE as _ERR_INVALID_VALUE
from cricket.cudafacts.device_attributes import MAX as _ATTRIBUTE_MAX

cdef int ERR_INVALID_VALUE = _ERR_INVALID_VALUE
cdef int ERR_INVALID_DEVICE = _ERR_INVALID_DEVICE
cdef uint64_t ATTRIBUTE_MAX = _ATTRIBUTE_MAX

cdef enum:
    WORDS = 4           # the most arguments of these calls


cdef inline bint fast(RuntimeCall call):
    """The guard's fast path holds: a device is visible, every thread is on the session's."""
    rt = call.runtime
    return not (rt.no_device or rt.multi_device)


cdef inline object devices(RuntimeCall call):
    """The session's device list, None before the first connection (the twin connects)."""
    conn = call.runtime._conn
    return None if conn is None else conn.devices


cdef inline void store_i32(uint64_t addr, object value):
    # as hostmem.store_i32 stores a Python int
    (<int32_t *><size_t>addr)[0] = <int32_t><long long>value


cdef class LocalCall(RuntimeCall):
    """A guarded call answered here in the common state; the twin's implementation otherwise."""

    cdef object call_ints(self, tuple args):
        cdef uint64_t words[WORDS]
        if not ints_as_words(args, words, WORDS):
            return RuntimeCall.call_ints(self, args)
        return self.call(words, <int>len(args))

    cdef int slow(self, const uint64_t *args, int nargs) except? -1:
        return RuntimeCall.call_ints(self, words_tuple(args, nargs))


cdef class DeviceCount(LocalCall):
    cdef int call(self, const uint64_t *args, int nargs) except? -1:
        if nargs != 1 or not fast(self):
            return self.slow(args, nargs)
        found = devices(self)
        if found is None:
            return self.slow(args, nargs)
        if not args[0]:
            return self.fail(ERR_INVALID_VALUE)
        store_i32(args[0], len(found))
        return 0


cdef class Device(LocalCall):
    cdef int call(self, const uint64_t *args, int nargs) except? -1:
        if nargs != 1 or not fast(self):
            return self.slow(args, nargs)
        if not args[0]:
            return self.fail(ERR_INVALID_VALUE)
        store_i32(args[0], self.runtime.thread.device)
        return 0


cdef class SetDevice(LocalCall):
    cdef int call(self, const uint64_t *args, int nargs) except? -1:
        if nargs != 1 or not fast(self):
            return self.slow(args, nargs)
        found = devices(self)
        if found is None:
            return self.slow(args, nargs)
        cdef int32_t device = <int32_t>args[0]
        if not 0 <= device < len(found):
            return self.fail(ERR_INVALID_DEVICE)
        rt = self.runtime
        if device != rt._server_device:
            return self.slow(args, nargs)      # Runtime.set_device: several devices from now on
        rt.thread.device = device
        return 0


cdef class DeviceAttribute(LocalCall):
    cdef int call(self, const uint64_t *args, int nargs) except? -1:
        if nargs != 3 or not fast(self):
            return self.slow(args, nargs)
        found = devices(self)
        cdef int32_t device = <int32_t>args[2]
        if found is None or not 0 <= device < len(found):
            return self.slow(args, nargs)      # (a device that does not exist: logged there)
        if not args[0] or not 0 < args[1] < ATTRIBUTE_MAX:
            return self.fail(ERR_INVALID_VALUE)
        store_i32(args[0], found[device].attributes.get(args[1], 0))
        return 0


cdef class LastError(Entry):
    """cudaGetLastError (not guarded): the thread's last error, reset."""
    cdef readonly object runtime
    cdef object twin

    def __init__(self, runtime, twin):
        self.runtime = runtime
        self.twin = twin

    @property
    def __name__(self):
        return self.twin.__name__

    cdef int call(self, const uint64_t *args, int nargs) except? -1:
        if nargs:
            return self.twin(*[args[i] for i in range(nargs)])
        thread = self.runtime.thread
        err = thread.last_error
        if err:
            thread.last_error = 0
        return err

    cdef object call_ints(self, tuple args):
        return self.twin(*args) if args else self.call(NULL, 0)


cdef class PeekAtLastError(LastError):
    """cudaPeekAtLastError (not guarded): the thread's last error, kept."""
    cdef int call(self, const uint64_t *args, int nargs) except? -1:
        if nargs:
            return self.twin(*[args[i] for i in range(nargs)])
        return self.runtime.thread.last_error


def entries(runtime) -> dict:
    """The runtime face's entries of these calls for ``runtime``: CUDA name -> entry."""
    answers = _twin.LocalAnswers(runtime)
    return {
        "cudaGetLastError": LastError(runtime, answers.cuda_get_last_error),
        "cudaPeekAtLastError": PeekAtLastError(runtime, answers.cuda_peek_at_last_error),
        "cudaGetDeviceCount": DeviceCount(answers.get_device_count, runtime, True),
        "cudaGetDevice": Device(answers.get_device, runtime, True),
        "cudaSetDevice": SetDevice(answers.set_device, runtime, True),
        "cudaDeviceGetAttribute": DeviceAttribute(answers.device_get_attribute, runtime, True),
    }
