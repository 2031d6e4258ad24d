"""CR_CTX_SET_LIMIT: context limits set on the session's device (the printf FIFO has its own call)."""
from __future__ import annotations

from .session import Session


def set_limit(session: Session, limit: int, value: int) -> None:
    """cuCtxSetLimit on the session's current device; the backend refuses what it cannot honour."""
    session.device.set_limit(limit, value)
