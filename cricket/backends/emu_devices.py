"""Several emulated devices in one ``emu`` backend (``--backend emu=devices=N``).

Each device of a session has an arena of its own at an address range of its own, all inside the
emulator's global window, so a device pointer tells its device (unified addressing, as CUDA has
on every 64-bit platform) and a copy between two devices' pointers needs no device argument.
What differs between the devices' HELLO entries (name, UUID, PCI location) is stated here.
"""
from __future__ import annotations

import dataclasses

from ..cudafacts import device_attributes as A
from ..cudafacts import p2p_attributes as P2P
from .base import DeviceProperties
from .emu.memory import GLOBAL_BASE, WINDOW_SHIFT

# The global window (one 2**40-byte range) split into equal per-device ranges.
DEVICE_SPAN = 1 << 37
MAX_DEVICES = (1 << WINDOW_SHIFT) // DEVICE_SPAN


def arena_base(index: int) -> int:
    """The device pointer where device ``index``'s arena starts."""
    return GLOBAL_BASE + index * DEVICE_SPAN


def placed_ranges(first: int, count: int, arena_size: int) -> list[tuple[int, int]]:
    """The address ranges of ``count`` devices standing at ``first``.. in a program's combined
    device list (``CR_PLACE_DEVICES``): device ``i``'s arena starts at ``arena_base(first + i)``
    and all its pointers lie in the ``DEVICE_SPAN`` bytes from there."""
    from ..cudafacts import curesult
    from .base import BackendError
    if first + count > MAX_DEVICES:
        raise BackendError(curesult.INVALID_VALUE,
                           f"cannot place {count} emu device(s) at index {first} of the combined device list: "
                           f"the emu backend places devices at indices 0 to {MAX_DEVICES - 1} only "
                           f"(MAX_DEVICES = {MAX_DEVICES}); list this server earlier or give it fewer devices")
    if arena_size > DEVICE_SPAN:
        raise BackendError(curesult.INVALID_VALUE,
                           f"cannot place emu devices whose arenas take {arena_size >> 30} GiB: a placed "
                           f"arena holds at most {DEVICE_SPAN >> 30} GiB (start the server with a smaller memory=)")
    return [(arena_base(first + i), DEVICE_SPAN) for i in range(count)]


def device_properties(first: DeviceProperties, index: int) -> DeviceProperties:
    """Device ``index`` as HELLO reports it: device 0's properties with its own UUID and PCI bus
    (``cudaDeviceGetPCIBusId`` gives ``0000:BB:00.0``, BB the bus id), the same otherwise."""
    if index == 0:
        return first
    attributes = dict(first.attributes)
    attributes[A.PCI_BUS_ID] = first.attributes.get(A.PCI_BUS_ID, 0) + index
    uuid = first.uuid[:-1] + bytes([(first.uuid[-1] + index) & 0xFF])
    return dataclasses.replace(first, name=f"{first.name} #{index}", uuid=uuid, attributes=attributes)


def check_options(spec: str, options: dict[str, int]) -> None:
    """Refuse a ``devices=N`` whose devices' arenas would not fit their address ranges."""
    from ..cudafacts import curesult
    from .base import BackendError
    from .emu.memory import DEFAULT_ARENA
    count = options.get("devices", 1)
    if count > MAX_DEVICES:
        raise BackendError(curesult.INVALID_VALUE, f"emu backend spec {spec!r}: at most {MAX_DEVICES} devices")
    if count > 1 and options.get("memory", DEFAULT_ARENA) > DEVICE_SPAN:
        raise BackendError(curesult.INVALID_VALUE, f"emu backend spec {spec!r}: with several devices each "
                           f"arena holds at most {DEVICE_SPAN >> 30} GiB")


# The link between two emulated devices of one session, as cudaDeviceGetP2PAttribute reports it:
# once access is enabled a kernel reaches the peer's memory as its own (emu.peer_window), atomics
# included (a session's kernels run one at a time); CUDA arrays over the link are not claimed.
LINK = {P2P.PERFORMANCE_RANK: 0, P2P.ACCESS_SUPPORTED: 1, P2P.NATIVE_ATOMIC_SUPPORTED: 1,
        P2P.CUDA_ARRAY_ACCESS_SUPPORTED: 0, P2P.ONLY_PARTIAL_NATIVE_ATOMIC_SUPPORTED: 0}


def enable_peer(device, peer) -> None:
    """Let kernels of engine device ``device`` reach ``peer``'s memory from the next launch on."""
    from ..cudafacts import curesult
    from .base import BackendError
    if peer is device:
        raise BackendError(curesult.INVALID_DEVICE, "a device cannot be its own peer")
    if device.remote is None or peer.arena.fd is None:
        raise BackendError(curesult.PEER_ACCESS_UNSUPPORTED, "peer access needs devices whose kernels run "
                                                             "in kernel workers")
    if peer in device.peers:
        raise BackendError(curesult.PEER_ACCESS_ALREADY_ENABLED,
                           f"peer access to the device at {peer.arena.base:#x} is already enabled")
    device.peers.append(peer)


def disable_peer(device, peer) -> None:
    from ..cudafacts import curesult
    from .base import BackendError
    if peer is device:
        raise BackendError(curesult.INVALID_DEVICE, "a device cannot be its own peer")
    if peer not in device.peers:
        raise BackendError(curesult.PEER_ACCESS_NOT_ENABLED,
                           f"peer access to the device at {peer.arena.base:#x} was not enabled")
    device.peers.remove(peer)
