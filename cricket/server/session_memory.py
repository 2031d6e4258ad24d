"""One session's account in the server's device-memory budget, as its device sees it.

Allocations are charged by the service (``mem_alloc``). What a backend takes on its own for the
session (the emu device's module globals and the local memory of a running launch) it charges
through this account, so that ``--session-memory`` and ``--device-memory`` bound that too."""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .limits import MemoryBudget
    from .session import Session


class SessionMemory:
    """Reserve and release device memory for ``session`` in ``budget``."""

    def __init__(self, budget: "MemoryBudget", session: "Session") -> None:
        self.budget = budget
        self.session = session

    def _emulated(self) -> bool:
        backend = self.session.backend
        return bool(backend is not None and backend.emulated)

    def reserve(self, size: int) -> None:
        """Charge ``size`` bytes, or raise BackendError(OUT_OF_MEMORY) naming the bound."""
        self.budget.reserve(self.session.id, size, self._emulated())

    def release(self, size: int) -> None:
        self.budget.release(self.session.id, size)

    def available(self) -> int | None:
        """Bytes the session may still take (None: no bound applies)."""
        limit = self.limit()
        if limit is None:
            return None
        return self.budget.share(self.session.id, limit, limit, self._emulated())[0]

    def limit(self) -> int | None:
        """The most the session may ever hold: its share, or the server's budget (None: unbounded)."""
        bounds = [b for b in (self.budget.per_session, self.budget._total_for(self._emulated())) if b is not None]
        return min(bounds) if bounds else None
