"""CR_CTX_SET_LIMIT: context limits set on the session's device (the printf FIFO has its own call).

A malloc heap larger than the default is device memory the session holds: what it adds beyond the
default counts against the session's share and the server's budget (``--session-memory``,
``--device-memory``) until the session ends."""
from __future__ import annotations

from ..cudafacts.limits import DEFAULTS, MALLOC_HEAP_SIZE
from .limits import MemoryBudget
from .session import Session


def set_limit(session: Session, limit: int, value: int, memory: MemoryBudget | None = None) -> None:
    """cuCtxSetLimit on the session's current device; the backend refuses what it cannot honour."""
    if memory is None or limit != MALLOC_HEAP_SIZE:
        session.device.set_limit(limit, value)
        return
    extra = max(0, value - DEFAULTS[MALLOC_HEAP_SIZE])
    charged = getattr(session, "heap_charged", 0)
    emulated = bool(session.backend.emulated)
    if extra > charged:
        memory.reserve(session.id, extra - charged, emulated)
    try:
        session.device.set_limit(limit, value)
    except BaseException:
        if extra > charged:
            memory.release(session.id, extra - charged)
        raise
    if extra < charged:
        memory.release(session.id, charged - extra)
    session.heap_charged = extra
