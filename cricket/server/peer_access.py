"""Peer access between two devices of a session (``CR_PEER_ACCESS``, ``CR_P2P_ATTRIBUTE``): what
``cudaDeviceEnablePeerAccess`` / ``cuCtxEnablePeerAccess`` and ``cudaDeviceGetP2PAttribute`` ask.

The backend decides (emu: kernels reach a peer's memory once enabled, see
``cricket.backends.emu_devices``); enabling twice, disabling what was not enabled and a device as
its own peer fail as CUDA fails them. Runs on the session's worker, so it takes effect between the
launches queued before and after it.
"""
from __future__ import annotations

import logging

from ..backends.base import BackendError
from ..cudafacts import curesult
from ..cudafacts import p2p_attributes
from .session import Session

log = logging.getLogger(__name__)


def _pair(session: Session, device: int, peer: int) -> None:
    """Both devices exist and differ (CUDA_ERROR_INVALID_DEVICE otherwise)."""
    if session.backend is None:
        raise BackendError(curesult.NOT_INITIALIZED, "call HELLO before any other procedure")
    count = len(session.backend.devices())
    if not (0 <= device < count and 0 <= peer < count) or device == peer:
        raise BackendError(curesult.INVALID_DEVICE, f"devices {device} and {peer}: two different devices of "
                                                    f"the {count} the backend has")


def peer_access(session: Session, device: int, peer: int, enable: bool) -> None:
    """Enable (or disable) access of ``device``'s kernels to ``peer``'s memory."""
    _pair(session, device, peer)
    to, other = session.device_at(device), session.device_at(peer)
    if enable:
        to.enable_peer_access(other)
    else:
        to.disable_peer_access(other)
    log.debug("session %d: peer access %d -> %d %s", session.id, device, peer,
              "enabled" if enable else "disabled")


def p2p_attribute(session: Session, src: int, dst: int, attribute: int) -> int:
    """A CUdevice_P2PAttribute of the link from ``src`` to ``dst``."""
    if attribute not in p2p_attributes.ALL:
        raise BackendError(curesult.INVALID_VALUE, f"{attribute} is no CUdevice_P2PAttribute")
    _pair(session, src, dst)
    return int(session.backend.p2p_attribute(src, dst, attribute))
