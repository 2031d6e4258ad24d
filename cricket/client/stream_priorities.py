"""Stream priorities (both API faces): the range of the part the devices stand for, and each
stream's priority as created, clamped into that range as CUDA clamps it.

A priority is a scheduling hint in CUDA: pending work of higher-priority streams goes first where
the GPU has a choice. A cricket session's work runs in the order it was issued, so priorities
change no result; they are reported back as given.
"""
from __future__ import annotations

import ctypes
import logging

from cricket.backends import reference_device
from cricket.client.driver_face import DRIVER_API
from cricket.client.faces import implements
from cricket.client.runtime import (
    ERR_INVALID_HANDLE, ERR_INVALID_VALUE, RUNTIME, SUCCESS, hostmem,
)
from cricket.client.runtime_face import RUNTIME_API
from cricket.cudafacts import streams

log = logging.getLogger(__name__)

rt = RUNTIME
LEAST, GREATEST = reference_device.STREAM_PRIORITY_LEAST, reference_device.STREAM_PRIORITY_GREATEST
_priorities: dict[int, int] = {}        # application stream handle -> priority


def clamp(priority: int) -> int:
    return min(max(ctypes.c_int32(priority).value, GREATEST), LEAST)


def priority_of(stream: int) -> int | None:
    """The priority of a stream of this process (default streams: the least), None for no stream."""
    if stream in (0, streams.LEGACY, streams.PER_THREAD):
        return LEAST
    return _priorities.get(stream, LEAST) if stream in rt.streams else None


@implements(RUNTIME_API, "cudaDeviceGetStreamPriorityRange")
def priority_range(least: int, greatest: int) -> int:
    if least:
        hostmem.store_i32(least, LEAST)
    if greatest:
        hostmem.store_i32(greatest, GREATEST)
    return SUCCESS


def record(stream: int, priority: int) -> None:
    """A stream was created with ``priority`` (both faces)."""
    _priorities[stream] = clamp(priority)


@implements(RUNTIME_API, "cudaStreamCreateWithPriority")
def stream_create(stream: int, flags: int, priority: int) -> int:
    if not stream:
        return ERR_INVALID_VALUE
    handle = rt.create_stream(flags)
    record(handle, priority)
    hostmem.store_u64(stream, handle)
    return SUCCESS


@implements(RUNTIME_API, "cudaStreamGetPriority")
@implements(DRIVER_API, "cuStreamGetPriority")
def stream_get_priority(stream: int, priority: int) -> int:
    """Both faces: their codes are the same numbers (invalid value 1, invalid handle 400)."""
    if not priority:
        return ERR_INVALID_VALUE
    value = priority_of(stream)
    if value is None:
        return ERR_INVALID_HANDLE
    hostmem.store_i32(priority, value)
    return SUCCESS
