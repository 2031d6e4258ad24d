"""The driver API's peers (forwarded by ``cext/driver/peers.c``, which checks the devices and
contexts): the server's answers through ``peers.p2p_value`` and ``peers.set_access``, so that
both faces give one answer. Access is kept per pair of devices, as for primary contexts."""
from __future__ import annotations

from cricket.client import peers
from cricket.client.driver_face import DRIVER_API
from cricket.client.faces import implements
from cricket.client.runtime import SUCCESS, hostmem
from cricket.cudafacts import p2p_attributes as P2P


@implements(DRIVER_API, "cuDeviceCanAccessPeer")
def can_access_peer(out: int, device: int, peer: int) -> int:
    hostmem.store_i32(out, 0 if device == peer else peers.p2p_value(P2P.ACCESS_SUPPORTED, device, peer))
    return SUCCESS


@implements(DRIVER_API, "cuDeviceGetP2PAttribute")
def p2p_attribute(out: int, attribute: int, src: int, dst: int) -> int:
    hostmem.store_i32(out, peers.p2p_value(attribute, src, dst))
    return SUCCESS


@implements(DRIVER_API, "cuCtxEnablePeerAccess")
def enable_peer_access(device: int, peer: int) -> int:
    peers.set_access(device, peer, True)
    return SUCCESS


@implements(DRIVER_API, "cuCtxDisablePeerAccess")
def disable_peer_access(device: int, peer: int) -> int:
    peers.set_access(device, peer, False)
    return SUCCESS
