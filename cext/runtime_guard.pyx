# cython: language_level=3
"""The runtime-API face's guard in Cython: it wraps every call the libcudart shim forwards.
Interface: ``cricket/_cext/runtime_guard.pxd``; pure-Python twin (same API, documented there):
``cricket/client/runtime_guard.py``.
"""
from cricket.client.errors import ERR_NO_DEVICE, ERR_UNAVAILABLE, ERR_UNKNOWN, cuda_error_of


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
        fn = self.__wrapped__
        try:
            if runtime.no_device and self.needs_device:
                return runtime.fail(ERR_NO_DEVICE)
            if runtime.multi_device:
                with runtime.device_lock:
                    runtime.select_device()
                    return runtime.fail(fn(*args) or 0)
            code = fn(*args)
            if code:
                runtime.thread.last_error = code
                return code
            return 0
        except Exception as exc:
            code = cuda_error_of(exc)
            runtime.call_failed(self.__name__, exc, code == ERR_UNKNOWN or code == ERR_UNAVAILABLE)
            return runtime.fail(code)
