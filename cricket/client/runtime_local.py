"""The runtime calls a process answers from what it holds, with no round trip: its device list
(HELLO's snapshot), the calling thread's device and last error.

Pure-Python twin of ``cricket._cext.runtime_local`` (``cext/runtime_local.pyx``), which answers
the same calls in C while one session serves and every thread is on its device, and runs these
functions otherwise. ``entries(runtime)`` gives the runtime face's entries for them (guarded as
``runtime_guard.RuntimeCall`` guards, the last-error queries as they are); ``runtime_calls``
registers those of the module ``cricket._select.load`` picks. Arguments as the shim passes them:
unsigned 64-bit ints, out-parameters written through ``hostmem``.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cricket.client import hostmem
from cricket.client.errors import ERR_INVALID_DEVICE, ERR_INVALID_VALUE, SUCCESS
from cricket.client.runtime_guard import RuntimeCall
from cricket.cudafacts.device_attributes import MAX as ATTRIBUTE_MAX


def i32(v: int) -> int:
    """A C ``int`` argument from its 64-bit word (two's complement)."""
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v & 0x80000000 else v


class LocalAnswers:
    """The implementations, for ``runtime`` (the process's ``Runtime``)."""

    def __init__(self, runtime: Any) -> None:
        self.rt = runtime

    def cuda_get_last_error(self) -> int:
        rt = self.rt
        err, rt.thread.last_error = rt.thread.last_error, 0
        return err

    def cuda_peek_at_last_error(self) -> int:
        return self.rt.thread.last_error

    def get_device_count(self, count: int) -> int:
        if not count:
            return ERR_INVALID_VALUE
        hostmem.store_i32(count, len(self.rt.devices))
        return SUCCESS

    def get_device(self, device: int) -> int:
        if not device:
            return ERR_INVALID_VALUE
        hostmem.store_i32(device, self.rt.thread.device)
        return SUCCESS

    def set_device(self, device: int) -> int:
        device = i32(device)
        if not 0 <= device < len(self.rt.devices):
            return ERR_INVALID_DEVICE
        self.rt.set_device(device)      # this host thread's device; the server follows at its next call
        return SUCCESS

    def device_get_attribute(self, value: int, attribute: int, device: int) -> int:
        if not value or not 0 < attribute < ATTRIBUTE_MAX:
            return ERR_INVALID_VALUE
        hostmem.store_i32(value, self.rt.device_attribute(i32(device), attribute))
        return SUCCESS


def entries(runtime: Any) -> dict[str, Callable[..., int]]:
    """The runtime face's entries of these calls for ``runtime``: CUDA name -> entry."""
    answers = LocalAnswers(runtime)
    return {
        "cudaGetLastError": answers.cuda_get_last_error,
        "cudaPeekAtLastError": answers.cuda_peek_at_last_error,
        "cudaGetDeviceCount": RuntimeCall(answers.get_device_count, runtime, True),
        "cudaGetDevice": RuntimeCall(answers.get_device, runtime, True),
        "cudaSetDevice": RuntimeCall(answers.set_device, runtime, True),
        "cudaDeviceGetAttribute": RuntimeCall(answers.device_get_attribute, runtime, True),
    }
