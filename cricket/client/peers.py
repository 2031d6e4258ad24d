"""Peers in the runtime API: access between devices, and copies between them.

Whether a device's kernels can reach another's memory, and the link's attributes, are the
server's to say (``CR_P2P_ATTRIBUTE``: the emu backend's devices of one session can, see
``cricket.backends.emu_devices``); enabling and disabling access go to the server too
(``CR_PEER_ACCESS``), which gives CUDA's errors for enabling twice or disabling what was not
enabled. Copies between devices need no peer access in CUDA: device pointers are unified
addresses, so ``cudaMemcpyPeer`` is a device-to-device copy that the server routes to the devices
holding its two pointers. The driver API's twins are in C (``cext/driver/peers.c``), on top of
:func:`p2p_value` and :func:`set_access` here.
"""
from __future__ import annotations

import logging

from cricket.client.faces import implements
from cricket.client.runtime import D2D, ERR_INVALID_DEVICE, ERR_INVALID_VALUE, RUNTIME, SUCCESS, hostmem
from cricket.client.runtime_calls import _copy, _i32
from cricket.client.runtime_face import RUNTIME_API
from cricket.cudafacts import p2p_attributes as P2P

log = logging.getLogger(__name__)

rt = RUNTIME


def _exists(device: int) -> bool:
    return 0 <= device < len(rt.devices)


def p2p_value(attribute: int, src: int, dst: int) -> int:
    """The server's value of a CUdevice_P2PAttribute between two visible devices (raises its error);
    0 for every attribute between devices of two servers (``CRICKET_SERVER`` listing several):
    no kernel reaches another server's memory."""
    from cricket.client.session import check
    from cricket.protocol import gen as P
    if not rt.same_server(src, dst):
        return 0
    res = rt.device_session(src)._stub.CR_P2P_ATTRIBUTE(P.cr_p2p_attribute_args(
        src=rt.devices[src].ordinal, dst=rt.devices[dst].ordinal, attribute=attribute))
    return check(res, "cuDeviceGetP2PAttribute").value


def set_access(device: int, peer: int, enable: bool) -> None:
    """Enable (or disable) access of visible ``device``'s kernels to ``peer``'s memory; between
    devices of two servers, CUDA_ERROR_PEER_ACCESS_UNSUPPORTED (cudaDeviceCanAccessPeer says 0)."""
    from cricket.client.errors import CudaError
    from cricket.client.session import check
    from cricket.cudafacts import curesult
    from cricket.protocol import gen as P
    if not rt.same_server(device, peer):
        raise CudaError(curesult.PEER_ACCESS_UNSUPPORTED, f"devices {device} and {peer} are on two cricket "
                        "servers: no peer access between them (copies work)",
                        "cuCtxEnablePeerAccess" if enable else "cuCtxDisablePeerAccess")
    res = rt.device_session(device)._stub.CR_PEER_ACCESS(P.cr_peer_access_args(
        device=rt.devices[device].ordinal, peer=rt.devices[peer].ordinal, enable=enable))
    check(res, "cuCtxEnablePeerAccess" if enable else "cuCtxDisablePeerAccess")


@implements(RUNTIME_API, "cudaDeviceCanAccessPeer")
def can_access_peer(can_access: int, device: int, peer: int) -> int:
    if not can_access:
        return ERR_INVALID_VALUE
    device, peer = _i32(device), _i32(peer)
    if not (_exists(device) and _exists(peer)):
        return ERR_INVALID_DEVICE
    able = 0 if device == peer else p2p_value(P2P.ACCESS_SUPPORTED, device, peer)
    hostmem.store_i32(can_access, able)
    return SUCCESS


def _peer_of_current(peer: int) -> int:
    """The checks enabling and disabling share: a device that exists, is not the current one, and
    the current one can access (cudaErrorInvalidDevice otherwise, as the runtime API documents;
    devices of two servers cannot)."""
    peer = _i32(peer)
    ok = _exists(peer) and peer != rt.thread.device and rt.same_server(rt.thread.device, peer)
    return SUCCESS if ok else ERR_INVALID_DEVICE


@implements(RUNTIME_API, "cudaDeviceEnablePeerAccess")
def enable_peer_access(peer: int, flags: int) -> int:
    if flags & 0xFFFFFFFF:
        return ERR_INVALID_VALUE
    code = _peer_of_current(peer)
    if not code:
        set_access(rt.thread.device, _i32(peer), True)
    return code


@implements(RUNTIME_API, "cudaDeviceDisablePeerAccess")
def disable_peer_access(peer: int) -> int:
    code = _peer_of_current(peer)
    if not code:
        set_access(rt.thread.device, _i32(peer), False)
    return code


@implements(RUNTIME_API, "cudaDeviceGetP2PAttribute")
def p2p_attribute(value: int, attribute: int, src: int, dst: int) -> int:
    if not value or _i32(attribute) not in P2P.ALL:
        return ERR_INVALID_VALUE
    src, dst = _i32(src), _i32(dst)
    if not (_exists(src) and _exists(dst)) or src == dst:
        return ERR_INVALID_DEVICE
    hostmem.store_i32(value, p2p_value(_i32(attribute), src, dst))
    return SUCCESS


@implements(RUNTIME_API, "cudaMemcpyPeerAsync")
def memcpy_peer(dst: int, dst_device: int, src: int, src_device: int, count: int, stream: int,
                sync: int) -> int:
    """cudaMemcpyPeer (``sync``) and cudaMemcpyPeerAsync: a device-to-device copy."""
    if not (_exists(_i32(dst_device)) and _exists(_i32(src_device))):
        return ERR_INVALID_DEVICE
    return _copy(dst, src, count, D2D, stream, bool(sync))
