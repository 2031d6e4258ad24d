"""Peers in the runtime API: access between devices, and copies between them.

cricket gives no kernel access to another device's memory (a session's devices each have their
own memory on the server, which maps no device's memory into another's), so the capability query
says 0 and enabling access fails with ``cudaErrorPeerAccessUnsupported``, as CUDA's does between
two GPUs that cannot reach each other. Copies between devices need no peer access in CUDA either:
device pointers are unified addresses, so ``cudaMemcpyPeer`` is a device-to-device copy that the
server routes to the devices holding its two pointers. The driver API's twins are in C
(``cext/driver/peers.c``).
"""
from __future__ import annotations

import logging

from cricket.client.faces import implements
from cricket.client.runtime import D2D, ERR_INVALID_DEVICE, ERR_INVALID_VALUE, RUNTIME, SUCCESS, hostmem
from cricket.client.runtime_calls import _copy, _i32
from cricket.client.runtime_face import RUNTIME_API
from cricket.cudafacts.cudart_errors import CODES

log = logging.getLogger(__name__)

rt = RUNTIME
ERR_PEER_UNSUPPORTED = CODES["cudaErrorPeerAccessUnsupported"]
ERR_PEER_NOT_ENABLED = CODES["cudaErrorPeerAccessNotEnabled"]
P2P_ATTRIBUTES = range(1, 5)     # cudaDevP2PAttrPerformanceRank .. cudaDevP2PAttrCudaArrayAccessSupported


def _exists(device: int) -> bool:
    return 0 <= device < len(rt.devices)


@implements(RUNTIME_API, "cudaDeviceCanAccessPeer")
def can_access_peer(can_access: int, device: int, peer: int) -> int:
    if not can_access:
        return ERR_INVALID_VALUE
    if not (_exists(_i32(device)) and _exists(_i32(peer))):
        return ERR_INVALID_DEVICE
    hostmem.store_i32(can_access, 0)
    return SUCCESS


def _peer_of_current(peer: int) -> int:
    """The checks enabling and disabling share: a device that exists and is not the current one."""
    peer = _i32(peer)
    return SUCCESS if _exists(peer) and peer != rt.thread.device else ERR_INVALID_DEVICE


@implements(RUNTIME_API, "cudaDeviceEnablePeerAccess")
def enable_peer_access(peer: int, flags: int) -> int:
    if flags & 0xFFFFFFFF:
        return ERR_INVALID_VALUE
    return _peer_of_current(peer) or ERR_PEER_UNSUPPORTED


@implements(RUNTIME_API, "cudaDeviceDisablePeerAccess")
def disable_peer_access(peer: int) -> int:
    return _peer_of_current(peer) or ERR_PEER_NOT_ENABLED


@implements(RUNTIME_API, "cudaDeviceGetP2PAttribute")
def p2p_attribute(value: int, attribute: int, src: int, dst: int) -> int:
    if not value or _i32(attribute) not in P2P_ATTRIBUTES:
        return ERR_INVALID_VALUE
    src, dst = _i32(src), _i32(dst)
    if not (_exists(src) and _exists(dst)) or src == dst:
        return ERR_INVALID_DEVICE
    hostmem.store_i32(value, 0)          # no access, so no rank and no atomics either
    return SUCCESS


@implements(RUNTIME_API, "cudaMemcpyPeerAsync")
def memcpy_peer(dst: int, dst_device: int, src: int, src_device: int, count: int, stream: int,
                sync: int) -> int:
    """cudaMemcpyPeer (``sync``) and cudaMemcpyPeerAsync: a device-to-device copy."""
    if not (_exists(_i32(dst_device)) and _exists(_i32(src_device))):
        return ERR_INVALID_DEVICE
    return _copy(dst, src, count, D2D, stream, bool(sync))
