"""Context limits (cudaDeviceSetLimit, cuCtxSetLimit): one table per process, for both faces.

The printf FIFO is sized on the server (before any printing launch), the malloc heap on the device
(before a kernel uses it: the server refuses later resizes as CUDA does); the stack size is kept
here only, as the emulator grows each thread's stack when a call needs it.
"""
from __future__ import annotations

from typing import Any

from cricket.client import device_output
from cricket.cudafacts import limits

_VALUES = dict(limits.DEFAULTS)


def get_limit(limit: int) -> int | None:
    """The current value of ``limit``, None for one this client does not keep."""
    return _VALUES.get(limit, limits.READ_ONLY.get(limit))


def set_limit(rt: Any, limit: int, value: int) -> bool:
    """Set ``limit``; False where CUDA answers an invalid value (a limit this client does not keep,
    a printf FIFO resized after a printing launch); a refused heap size raises the server's error."""
    if limit not in _VALUES:
        return False
    if limit == limits.PRINTF_FIFO_SIZE and not device_output.set_buffer_size(
            rt.conn, value, rt.conn.output.armed and rt.stats.launches > 0):
        return False
    if limit == limits.MALLOC_HEAP_SIZE:
        rt.conn.set_limit(limit, value)
    _VALUES[limit] = value
    return True
