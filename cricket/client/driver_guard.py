"""The driver-API face's guard around each implementation: a server to talk to, the thread's
device on the server, and an exception becomes the ``CUresult`` the call returns.

Pure-Python twin of ``cricket._cext.driver_guard`` (``cext/driver_guard.pyx``, interface in
``cricket/_cext/driver_guard.pxd``); ``driver_face`` picks one through ``cricket._select.load``.
The driver API keeps no last error: a failure is the call's result, and logged as the runtime's.
"""
from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Any

from cricket.client.errors import DriverApiError, result_of
from cricket.client.runtime_guard import Entry
from cricket.cudafacts.curesult import DEVICE_UNAVAILABLE, NOT_INITIALIZED, SUCCESS, UNKNOWN

log = logging.getLogger("cricket.client.driver_api")


class DriverCall(Entry):
    """``fn`` guarded for ``runtime`` (the process's ``Runtime``)."""

    def __init__(self, fn: Callable[..., Any], runtime: Any) -> None:
        self.__wrapped__ = fn
        self.__name__ = self.__qualname__ = fn.__name__
        self.runtime = runtime

    def __call__(self, *args: int) -> int:
        runtime = self.runtime
        if runtime._conn is None or runtime.multi_device:
            return guarded_call(self, args)
        try:
            return self.__wrapped__(*args) or SUCCESS
        except Exception as exc:
            return failed(self, exc)


_no_server_logged = False


def require_server(runtime: Any) -> None:
    """Raise NOT_INITIALIZED when there is no session and no server to open one with (logged once)."""
    global _no_server_logged
    if runtime._conn is None and not os.environ.get("CRICKET_SERVER"):
        message = ("no cricket server: set CRICKET_SERVER=ADDR (a `cricket server` address) or run "
                   "the program with `cricket run -- CMD`")
        if not _no_server_logged:
            _no_server_logged = True
            log.error("%s; driver calls that need the server return CUDA_ERROR_NOT_INITIALIZED", message)
        raise DriverApiError(NOT_INITIALIZED, message)


def guarded_call(call: DriverCall, args: tuple) -> int:
    """``call`` before the first connection or while threads use several devices (the compiled
    guard's slow path as well)."""
    runtime = call.runtime
    try:
        require_server(runtime)
        if runtime.multi_device:
            # the server session follows the calling thread's device (cricketSetDevice)
            with runtime.device_lock:
                runtime.select_device()
                return call.__wrapped__(*args) or SUCCESS
        return call.__wrapped__(*args) or SUCCESS
    except Exception as exc:
        return failed(call, exc)


def failed(call: DriverCall, exc: Exception) -> int:
    """The CUresult of an implementation's exception, logged."""
    code = result_of(exc)
    call.runtime.call_failed(call.__name__, exc, code in (UNKNOWN, DEVICE_UNAVAILABLE), log)
    return code
