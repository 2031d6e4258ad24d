"""A test backend for CUDA_VISIBLE_DEVICES: the emu backend offering two devices ("fake" second
device, standing in for a multi-GPU server), told apart by name, UUID and arena size. Loaded by
the server as ``--backend two_emu_devices:TwoDeviceEmu`` with this folder on PYTHONPATH."""
from __future__ import annotations

import dataclasses

from cricket.cudafacts import curesult
from cricket.backends.base import BackendError, Device
from cricket.backends.emu_backend import EmuBackend, EmuDevice, _engine

NAMES = ("cricket emu A", "cricket emu B")
UUIDS = (bytes.fromhex("aaaa0000000000000000000000000000"), bytes.fromhex("bbbb0000000000000000000000000001"))
ARENAS = (1 << 30, 1 << 29)          # what cudaMemGetInfo reports as total on each


class TwoDeviceEmu(EmuBackend):
    type_name = "emu2"
    description = "two emulated devices (tests)"

    def __init__(self, spec: str = "") -> None:
        super().__init__(spec)
        self._props = [dataclasses.replace(self._properties, name=n, uuid=u, total_memory=a)
                       for n, u, a in zip(NAMES, UUIDS, ARENAS)]

    def devices(self) -> list:
        return self._props

    def device(self, index: int) -> Device:
        return self.open_device(index)

    def open_device(self, index: int) -> Device:
        if index not in (0, 1):
            raise BackendError(curesult.INVALID_DEVICE, f"device {index} does not exist (two here)")
        return EmuDevice(_engine().EmuDevice(arena_size=ARENAS[index]), self._props[index])
