# cython: language_level=3
"""The runtime-API face's guard in Cython: it wraps every call the libcudart shim forwards.
Interface: ``cricket/_cext/runtime_guard.pxd``; pure-Python twin (same API, documented there):
``cricket/client/runtime_guard.py``.
"""
from cricket.client import runtime_guard as _twin

# The rare paths (no device, several devices, an exception) are the twin's functions.
cdef object _guarded_call = _twin.guarded_call
cdef object _failed = _twin.failed


cdef class RuntimeCall:
    def __init__(self, fn, runtime, needs_device):
        self.__wrapped__ = fn
        self.__name__ = fn.__name__
        self.runtime = runtime
        self.needs_device = needs_device

    @property
    def __qualname__(self):
        return self.__name__

    def __call__(self, *args):
        runtime = self.runtime
        if runtime.no_device or runtime.multi_device:
            return _guarded_call(self, args)
        try:
            code = self.__wrapped__(*args)
        except Exception as exc:
            return _failed(self, exc)
        if code:
            runtime.thread.last_error = code
            return code
        return 0
