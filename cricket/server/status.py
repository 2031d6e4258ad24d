"""CR_SERVER_STATUS: the server and its sessions as ``cricket status`` and ``cricket top`` show them.

Only an operator may ask: a client that sent the admin token in HELLO, or one on a Unix socket
that runs as the server's user (or root), which could read the server's memory anyway.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING

from .. import __version__
from ..cudafacts import curesult
from ..backends.base import BackendError
from ..protocol import gen as P

if TYPE_CHECKING:
    from .service import CricketService
    from .session import Session


def is_operator(session: Session) -> bool:
    return session.admin or session.peer_uid in (os.getuid(), 0)


def server_status(service: CricketService, caller: Session) -> P.cr_server_status:
    """The reply to CR_SERVER_STATUS (runs on the event loop: it only reads counters)."""
    service.greeted(caller)
    if not is_operator(caller):
        raise BackendError(curesult.NOT_PERMITTED,
                           "server status is for operators: send the admin token (CRICKET_ADMIN_TOKEN) "
                           "or connect through the Unix socket as the server's user")
    loaded = service.registry.loaded()
    devices = []
    for type_name, backend in loaded.items():
        for index, device in enumerate(backend.devices()):
            devices.append(P.cr_device_summary(backend=_name(type_name), index=index,
                                               name=_name(device.name), total_memory=device.total_memory))
    others = [s for s in list(service.sessions.values()) if s is not caller]
    return P.cr_server_status(
        server_version=f"cricket {__version__}", pid=os.getpid(),
        uptime_ms=int(service.stats.uptime * 1000),
        backends=[P.cr_backend_info(type=_name(t), loaded=True, available=True,
                                    reason=_message(f"{type(b).__module__}:{type(b).__qualname__}"))
                  for t, b in loaded.items()][:P.CRICKET_MAX_BACKENDS],
        devices=devices[:P.CRICKET_MAX_DEVICES],
        sessions_total=len(others),
        sessions=[session_status(s) for s in others[:P.CRICKET_MAX_STATUS_SESSIONS]])


def session_status(s: Session) -> P.cr_session_status:
    st = s.stats
    return P.cr_session_status(
        id=s.id, peer=_name(s.peer), client=_name(s.client), admin=bool(s.admin),
        backend=_name(s.backend_type), device=s.device_index, seconds=int(st.age),
        memory=s.allocations.total_bytes, allocations=len(s.allocations), modules=len(s.modules),
        streams=len(s.streams), events=len(s.events), calls=sum(st.calls.values()),
        bytes_htod=st.bytes("htod"), bytes_dtoh=st.bytes("dtoh"), kernels=st.kernels,
        kernel_us=int(st.kernel_seconds * 1e6), last_error=st.last_error,
        last_error_message=_message(st.last_error_message))


def _name(text: str) -> str:
    """``text`` cut to the longest name cricket.x carries."""
    return text[:P.CRICKET_MAX_NAME]


def _message(text: str) -> str:
    """``text`` cut to the longest message cricket.x carries, marked with "..." when cut."""
    return text if len(text) <= P.CRICKET_MAX_MESSAGE else text[:P.CRICKET_MAX_MESSAGE - 3] + "..."
