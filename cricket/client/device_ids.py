"""How the runtime API names devices beyond their ordinals: PCI bus ids.

A PCI bus id is ``DDDDDDDD:BB:DD.0`` (domain, bus, device; function 0), made from the device
attributes HELLO reported, so that ``cudaDeviceGetByPCIBusId`` finds each device by the id
``cudaDeviceGetPCIBusId`` gave it. (The driver library answers its twins in C, cext/driver/devices.c.)
"""
from __future__ import annotations

import ctypes
import logging

from cricket.client.faces import implements
from cricket.client.runtime import ERR_INVALID_DEVICE, ERR_INVALID_VALUE, RUNTIME, SUCCESS, hostmem
from cricket.client.runtime_calls import _i32
from cricket.client.runtime_face import RUNTIME_API
from cricket.cudafacts import device_attributes as A

log = logging.getLogger(__name__)

rt = RUNTIME
MAX_BUS_ID = 64          # longer text given to cudaDeviceGetByPCIBusId is not a bus id


def pci_location(device: int) -> tuple[int, int, int]:
    """(domain, bus, device) of a device that exists."""
    a = rt.device_attribute
    return a(device, A.PCI_DOMAIN_ID), a(device, A.PCI_BUS_ID), a(device, A.PCI_DEVICE_ID)


def parse_bus_id(text: str) -> tuple[int, int, int] | None:
    """``[domain:]bus:device[.function]`` in hexadecimal, as CUDA accepts it; None when malformed."""
    parts = text.split(".")[0].split(":")
    if len(parts) == 2:
        parts = ["0", *parts]
    if len(parts) != 3:
        return None
    try:
        domain, bus, device = (int(p, 16) for p in parts)
    except ValueError:
        return None
    return domain, bus, device


@implements(RUNTIME_API, "cudaDeviceGetPCIBusId")
def get_pci_bus_id(out: int, length: int, device: int) -> int:
    length, device = _i32(length), _i32(device)
    if not out or length <= 0:
        return ERR_INVALID_VALUE
    if not 0 <= device < len(rt.devices):
        return ERR_INVALID_DEVICE
    text = "%08x:%02x:%02x.0" % pci_location(device)     # as the driver library gives it (devices.c)
    hostmem.write(out, text.encode()[:length - 1] + b"\0")
    return SUCCESS


@implements(RUNTIME_API, "cudaDeviceGetByPCIBusId")
def get_by_pci_bus_id(out: int, text: int) -> int:
    if not out or not text:
        return ERR_INVALID_VALUE
    wanted = parse_bus_id(ctypes.string_at(text)[:MAX_BUS_ID].decode(errors="replace"))
    if wanted is None:
        return ERR_INVALID_VALUE
    for device in range(len(rt.devices)):
        if pci_location(device) == wanted:
            hostmem.store_i32(out, device)
            return SUCCESS
    return ERR_INVALID_DEVICE
