"""Device-to-device copies between two devices of a session (``cudaMemcpyPeer``, ``cuMemcpyPeer``
and ``cudaMemcpy`` with ``cudaMemcpyDefault`` across devices: the pointers tell the devices).

Within one device the backend copies; between two, the bytes go through the server in slices, so
a large copy never holds more than one slice on the host.
"""
from __future__ import annotations

import logging
from typing import Any

from ..backends.base import Device
from .session import Session

log = logging.getLogger(__name__)

SLICE = 64 << 20


def stream_on(session: Session, handle: int, device: Device) -> Any:
    """The native stream of ``handle`` where it belongs to ``device``; else the default stream
    (a copy between devices is ordered by the session's worker, not by either device's stream)."""
    if handle == 0:
        return None
    record = session.streams.get(handle)
    return record.native if record.device is device else None


def memcpy_dtod(session: Session, dst: int, src: int, size: int, stream: int) -> None:
    """Copy ``size`` bytes from ``src`` to ``dst``, each on whichever of the session's devices holds it."""
    to, source = session.device_of(dst), session.device_of(src)
    if to is source:
        to.memcpy_dtod(dst, src, size, session.stream(stream))
        return
    log.debug("session %d: peer copy of %d bytes %#x -> %#x", session.id, size, src, dst)
    from_stream, to_stream = stream_on(session, stream, source), stream_on(session, stream, to)
    for offset in range(0, size, SLICE):
        n = min(SLICE, size - offset)
        to.memcpy_htod(dst + offset, source.memcpy_dtoh_view(src + offset, n, from_stream), to_stream)
