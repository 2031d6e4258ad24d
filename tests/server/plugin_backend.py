"""A third-party backend as a user would write one, loaded by ``module:Class`` in the tests.

It keeps device memory in host bytearrays and has no kernel engine (launches are refused with
CUDA_ERROR_NOT_SUPPORTED); streams and events complete at once. It shows that the backend
interface is enough for an outside package, and gives the session tests a small real backend.
"""
from __future__ import annotations

import itertools
import time

from cricket.cudafacts import curesult
from cricket.backends.base import Backend, BackendError, Device, DeviceProperties, FunctionInfo


class HostMemoryDevice(Device):
    BASE = 0x7F0000000000

    def __init__(self, total: int) -> None:
        self.total = total
        self.memory: dict[int, bytearray] = {}
        self._next = itertools.count(self.BASE, 1 << 20)
        self.freed: list[int] = []

    def _find(self, ptr: int, size: int) -> tuple[bytearray, int]:
        for base, buf in self.memory.items():
            if base <= ptr and ptr + size <= base + len(buf):
                return buf, ptr - base
        raise BackendError(curesult.INVALID_VALUE, f"{ptr:#x}+{size} is not allocated")

    def mem_alloc(self, size):
        if size > self.mem_get_info()[0]:
            raise BackendError(curesult.OUT_OF_MEMORY, f"{size} bytes do not fit")
        ptr = next(self._next)
        self.memory[ptr] = bytearray(size)
        return ptr

    def mem_free(self, ptr):
        if self.memory.pop(ptr, None) is None:
            raise BackendError(curesult.INVALID_VALUE, f"{ptr:#x} is not allocated")
        self.freed.append(ptr)

    def mem_get_info(self):
        used = sum(len(b) for b in self.memory.values())
        return self.total - used, self.total

    def memcpy_htod(self, dst, data, stream=None):
        buf, off = self._find(dst, len(data))
        buf[off:off + len(data)] = data

    def memcpy_dtoh(self, src, size, stream=None):
        buf, off = self._find(src, size)
        return bytes(buf[off:off + size])

    def memcpy_dtod(self, dst, src, size, stream=None):
        self.memcpy_htod(dst, self.memcpy_dtoh(src, size))

    def memset(self, dst, value, element_size, count, stream=None):
        self.memcpy_htod(dst, (value & ((1 << (8 * element_size)) - 1)).to_bytes(element_size, "little") * count)

    def module_load(self, image, kind):
        return {"image": bytes(image)}

    def module_unload(self, module):
        pass

    def module_get_function(self, module, name):
        if name.encode() not in module["image"]:
            raise BackendError(curesult.NOT_FOUND, f"no kernel {name}")
        return FunctionInfo(native=name, params=[], param_size=0)

    def module_get_global(self, module, name):
        raise BackendError(curesult.NOT_FOUND, f"no variable {name}")

    def launch(self, function, grid, block, shared_mem, stream, params):
        raise BackendError(curesult.NOT_SUPPORTED, "the host-memory backend runs no kernels")

    def stream_create(self, flags):
        return object()

    def stream_destroy(self, stream):
        pass

    def stream_synchronize(self, stream):
        pass

    def stream_query(self, stream):
        return True

    def stream_wait_event(self, stream, event):
        pass

    def event_create(self, flags):
        return [None]

    def event_destroy(self, event):
        pass

    def event_record(self, event, stream):
        event[0] = time.perf_counter()

    def event_synchronize(self, event):
        pass

    def event_query(self, event):
        return True

    def event_elapsed_time(self, start, end):
        if start[0] is None or end[0] is None:
            raise BackendError(curesult.INVALID_HANDLE, "event not recorded")
        return (end[0] - start[0]) * 1000.0

    def synchronize(self):
        pass


class HostMemoryBackend(Backend):
    type_name = "hostmem"
    description = "host memory only, no kernels (a test plugin)"
    emulated = True

    def __init__(self, spec: str = "") -> None:
        super().__init__(spec)
        self._device = HostMemoryDevice(int(spec or 64 << 20))

    def devices(self):
        return [DeviceProperties(name="host memory", uuid=b"\x01" * 16,
                                 total_memory=self._device.total, attributes={1: 1024})]

    def device(self, index):
        if index != 0:
            raise BackendError(curesult.INVALID_DEVICE, f"no device {index}")
        return self._device


class FailingInitBackend(Backend):
    """A plugin whose initialisation fails, as one would on a machine that lacks its hardware."""

    type_name = "failing"

    def __init__(self, spec: str = "") -> None:
        raise RuntimeError("the frobnicator is not plugged in")

    def devices(self):
        return []

    def device(self, index):
        raise AssertionError


class NotABackend:
    pass
