"""A backend with two devices of different sizes, standing in for a two-GPU machine in the
per-thread current device tests (no kernels: the host-memory test plugin of tests/server per device)."""
from __future__ import annotations

from plugin_backend import HostMemoryBackend, HostMemoryDevice

from cricket.cudafacts import curesult
from cricket.backends.base import BackendError, DeviceProperties

SIZES = (64 << 20, 32 << 20)


class TwoDeviceBackend(HostMemoryBackend):
    type_name = "twodevices"
    description = "two host-memory devices (a test plugin)"

    def __init__(self, spec: str = "") -> None:
        super().__init__(spec)
        self._devices = [HostMemoryDevice(size) for size in SIZES]

    def devices(self):
        return [DeviceProperties(name=f"host memory {i}", uuid=bytes([i + 1]) * 16, total_memory=size,
                                 attributes={1: 1024}) for i, size in enumerate(SIZES)]

    def _pick(self, index):
        if not 0 <= index < len(self._devices):
            raise BackendError(curesult.INVALID_DEVICE, f"no device {index}")
        return self._devices[index]

    def device(self, index):
        return self._pick(index)

    def open_device(self, index):
        return self._pick(index)
