"""Host functions in stream order: cudaLaunchHostFunc, cudaStreamAddCallback, cuLaunchHostFunc and
the host nodes of graphs.

CUDA runs the function once the stream's earlier work is done and holds the stream's later work
until it returns. cricket runs it in the calling thread: it waits for the stream (its earlier work,
and device-to-host copies deferred before), then calls the function, then returns, so nothing the
application issues afterwards can start before the function is done. The cost: the call blocks
the issuing thread where CUDA's would return at once. A stream with an error: the callback of
cudaStreamAddCallback gets the error as its status; a host function (cudaLaunchHostFunc) is not
run, and the error is returned, as the next synchronising call would return it.
"""
from __future__ import annotations

import ctypes
import logging

from cricket.client.errors import ERR_INVALID_VALUE, CudaRuntimeError, cuda_error_of
from cricket.client.runtime import RUNTIME as rt

log = logging.getLogger(__name__)

HOST_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p)                                  # cudaHostFn_t
STREAM_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p)  # cudaStreamCallback_t


def run_in_order(stream: int, fn: int, data: int) -> None:
    """Run host function ``fn(data)`` after application stream ``stream``'s earlier work."""
    if not fn:
        raise CudaRuntimeError(ERR_INVALID_VALUE, "host function is NULL")
    rt.synchronize_stream(stream)
    HOST_FN(fn)(data or None)


def run_stream_callback(stream: int, callback: int, data: int, flags: int) -> None:
    """cudaStreamAddCallback: ``callback(stream, status, data)`` after the stream's earlier work."""
    if not callback or flags:
        raise CudaRuntimeError(ERR_INVALID_VALUE, "callback is NULL or flags are not 0")
    try:
        rt.synchronize_stream(stream)
        status = 0
    except CudaRuntimeError as exc:
        status = exc.code
    except Exception as exc:                 # the connection: the callback is told
        status = cuda_error_of(exc)
    STREAM_CALLBACK(callback)(stream or None, status, data or None)
