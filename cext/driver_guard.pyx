# cython: language_level=3
"""The driver-API face's guard in Cython: it wraps every call the libcuda.so.1 replacement forwards
to Python. Interface: ``cricket/_cext/driver_guard.pxd``; pure-Python twin (same API, documented
there): ``cricket/client/driver_guard.py``. ``cext/cuda_api.pyx`` calls it with the argument words
(``runtime_guard.Entry``).
"""
from libc.stdint cimport uint64_t

from cricket._cext.runtime_guard cimport words_tuple

from cricket.client import driver_guard as _twin

# The rare paths (no session yet, several devices, an exception) are the twin's functions.
cdef object _guarded_call = _twin.guarded_call
cdef object _failed = _twin.failed


cdef class DriverCall(Entry):
    def __init__(self, fn, runtime):
        self.__wrapped__ = fn
        self.__name__ = fn.__name__
        self.runtime = runtime

    @property
    def __qualname__(self):
        return self.__name__

    cdef object call_ints(self, tuple args):
        runtime = self.runtime
        if runtime._conn is None or runtime.multi_device:
            return _guarded_call(self, args)
        try:
            return self.__wrapped__(*args) or 0
        except Exception as exc:
            return _failed(self, exc)

    cdef int call(self, const uint64_t *args, int nargs) except? -1:
        return self.call_ints(words_tuple(args, nargs))
