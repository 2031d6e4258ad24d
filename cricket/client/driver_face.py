"""The driver-API face: the table the libcuda.so.1 replacement's calls are looked up in, its guard,
and how an exception becomes a ``CUresult``.

Feature modules register with ``@implements(DRIVER_API, "cuName")`` (``faces``); each takes the C
arguments as integers and returns the ``CUresult``. ``driver_api`` is what the entry imports.
"""
from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable
from typing import Any

from cricket.client.errors import error_source
from cricket.client.faces import Face
from cricket.client.runtime import RUNTIME as rt
from cricket.cudafacts.curesult import (DEVICE_UNAVAILABLE, INVALID_HANDLE, INVALID_VALUE, NOT_FOUND,
                                        NOT_INITIALIZED, SUCCESS, UNKNOWN)

log = logging.getLogger("cricket.client.driver_api")

# The cudaError_t codes the client runtime raises that differ from the CUresult of the same failure.
_RUNTIME_TO_DRIVER = {9: INVALID_VALUE, 17: INVALID_VALUE, 13: NOT_FOUND, 98: INVALID_HANDLE,
                      21: INVALID_VALUE}


class DriverApiError(Exception):
    """A driver call failed: ``code`` is the CUresult it returns."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def result_of(exc: BaseException) -> int:
    """The CUresult for an exception raised below the driver API."""
    if isinstance(exc, DriverApiError):
        return exc.code
    linker = sys.modules.get("cricket.client.jit_link")     # loaded by the first cuLink* call
    if linker is not None and isinstance(exc, linker.LinkError):
        return exc.code
    source, code = error_source(exc)
    if source == "driver":
        return code
    if source == "runtime":
        return _RUNTIME_TO_DRIVER.get(code, code)
    return {"connection": DEVICE_UNAVAILABLE, "argument": INVALID_VALUE}.get(source, UNKNOWN)


_no_server_logged = False


def _require_server() -> None:
    global _no_server_logged
    if rt._conn is None and not os.environ.get("CRICKET_SERVER"):
        message = ("no cricket server: set CRICKET_SERVER=ADDR (a `cricket server` address) or run "
                   "the program with `cricket run -- CMD`")
        if not _no_server_logged:
            _no_server_logged = True
            log.error("%s; driver calls that need the server return CUDA_ERROR_NOT_INITIALIZED", message)
        raise DriverApiError(NOT_INITIALIZED, message)


def driver_call(fn: Callable[..., Any]) -> Callable[..., int]:
    """Wrap an implementation: exceptions become CUresult codes."""
    def call(*args: int) -> int:
        try:
            _require_server()
            if rt.multi_device:
                # the server session follows the calling thread's device (cricketSetDevice)
                with rt.device_lock:
                    rt.select_device()
                    return fn(*args) or SUCCESS
            return fn(*args) or SUCCESS
        except Exception as exc:
            code = result_of(exc)
            rt.call_failed(fn.__name__, exc, code in (UNKNOWN, DEVICE_UNAVAILABLE), log)
            return code
    call.__name__ = call.__qualname__ = fn.__name__
    call.__wrapped__ = fn  # type: ignore[attr-defined]
    return call


DRIVER_API = Face("CUDA driver API", driver_call)
