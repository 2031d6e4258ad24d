"""Where a session's devices stand among the devices of several servers (``CR_PLACE_DEVICES``).

A program may use the devices of several servers as one device list (``CRICKET_SERVER=a,b``); a
device pointer then has to tell its server, so two servers must not hand out the same addresses.
The client tells each server the combined-list index of its device 0, right after HELLO; a
backend that chooses its addresses itself (``emu``) then opens the session's devices in ranges of
their own and answers them, one per device. Where the driver chooses addresses (``cuda``) the
answer is empty. Asked once per session, before it has allocated, loaded or used any device:
afterwards its pointers are already out where the client may have seen them.
"""
from __future__ import annotations

import logging

from ..backends.base import BackendError
from ..cudafacts import curesult
from .session import Session

log = logging.getLogger(__name__)


def place_devices(session: Session, first: int) -> list[tuple[int, int]]:
    """Open the session's devices (from now on) as devices ``first``.. of the combined list;
    returns each device's address range ``(base, size)``, or none."""
    if session.backend is None:
        raise BackendError(curesult.NOT_INITIALIZED, "call HELLO before any other procedure")
    if session.placed:
        raise BackendError(curesult.INVALID_VALUE, "this session's devices were placed already: "
                                                   "CR_PLACE_DEVICES is answered once per session")
    if session.open_devices or len(session.allocations) or len(session.modules):
        raise BackendError(curesult.INVALID_VALUE,
                           "CR_PLACE_DEVICES must come first, right after HELLO: this session has "
                           "already allocated, loaded or used a device")
    ranges = session.backend.device_ranges(first)
    session.placed = True
    session.placement = first if ranges else 0
    log.info("session %d: devices placed at index %d of the combined device list%s", session.id, first,
             "".join(f"; device {i} at [{b:#x}, {b + n:#x})" for i, (b, n) in enumerate(ranges))
             or " (the driver chooses their addresses)")
    return ranges
