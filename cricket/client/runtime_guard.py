"""The runtime-API face's guard around each implementation: the thread's device on the server, and
an exception or a nonzero result becomes the ``cudaError_t`` kept as the thread's last error.

Pure-Python twin of ``cricket._cext.runtime_guard`` (``cext/runtime_guard.pyx``, interface in
``cricket/_cext/runtime_guard.pxd``); ``runtime_face`` picks one through ``cricket._select.load``.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cricket.client.errors import ERR_NO_DEVICE, ERR_UNAVAILABLE, ERR_UNKNOWN, cuda_error_of


class Entry:
    """An implementation the libcudart shim's entry calls (in the compiled module, with the C
    argument words as they came; here with ints, as Python callers do)."""


class RuntimeCall(Entry):
    """``fn`` guarded for ``runtime`` (the process's ``Runtime``); ``needs_device``: without a
    visible device the call fails with cudaErrorNoDevice (the version calls do not)."""

    def __init__(self, fn: Callable[..., Any], runtime: Any, needs_device: bool) -> None:
        self.__wrapped__ = fn
        self.__name__ = self.__qualname__ = fn.__name__
        self.runtime = runtime
        self.needs_device = needs_device

    def __call__(self, *args: int) -> int:
        runtime = self.runtime
        if runtime.no_device or runtime.multi_device:
            return guarded_call(self, args)
        try:
            code = self.__wrapped__(*args)
        except Exception as exc:
            return failed(self, exc)
        if code:                    # runtime.fail, inline: this wraps every launch
            runtime.thread.last_error = code
            return code
        return 0


def guarded_call(call: RuntimeCall, args: tuple) -> int:
    """``call`` when no device is visible or threads use several devices (the compiled guard's
    slow path as well)."""
    runtime = call.runtime
    try:
        if runtime.no_device and call.needs_device:
            return runtime.fail(ERR_NO_DEVICE)
        if not runtime.multi_device:
            return runtime.fail(call.__wrapped__(*args) or 0)
        # The session has one current device on the server: switch it to this thread's and keep
        # other threads from switching it until this call has gone out.
        with runtime.device_lock:
            runtime.select_device()
            return runtime.fail(call.__wrapped__(*args) or 0)
    except Exception as exc:
        return failed(call, exc)


def failed(call: RuntimeCall, exc: Exception) -> int:
    """The cudaError_t of an implementation's exception, kept as the thread's last error."""
    code = cuda_error_of(exc)
    call.runtime.call_failed(call.__name__, exc, code in (ERR_UNKNOWN, ERR_UNAVAILABLE))
    return call.runtime.fail(code)
