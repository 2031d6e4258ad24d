"""Server-wide counts: what all sessions together hold against the server's bounds.

One process keeps them in its memory under a thread lock. ``cricket server --workers N`` makes
one shared ledger before it forks (:meth:`Ledger.shared`): the counts sit in a shared anonymous
mapping every worker inherits, under a process-shared semaphore (``multiprocessing.Lock``:
uncontended, an atomic operation without a system call). A worker that died holding it would
stop the server anyway (``cricket.server.workers``); the others give up after
:data:`LOCK_TIMEOUT` rather than hang, and from then on at once (docs/server-workers.md).
"""
from __future__ import annotations

import logging
import mmap
import threading
from collections.abc import Iterable
from typing import Any

from ..backends.base import BackendError
from ..cudafacts import curesult

log = logging.getLogger(__name__)

# The slots: one count each.
DEVICE_MEMORY = 0        # bytes of device memory the sessions hold (MemoryBudget)
SESSIONS = 1             # live client connections (--max-sessions; workers only)
PINNED_REGIONS = 2       # pinned host regions mapped (CRICKET_PINNED_REGIONS_TOTAL)
GRAPH_NODES = 3          # nodes of executable graphs (cricket.server.graphs)
GRAPH_BYTES = 4          # their kernel parameter bytes
_SLOTS = 5
_SIZE = 8 * _SLOTS
LOCK_TIMEOUT = 5.0       # seconds a worker waits for the shared ledger before it gives up


class LedgerStuck(BackendError):
    """The shared ledger stayed locked: a worker died holding it. The call that needed it fails
    with ``CUDA_ERROR_UNKNOWN`` and this message."""

    def __init__(self, waited: float) -> None:
        super().__init__(curesult.UNKNOWN, f"the server-wide ledger stayed locked for {waited:g} s (a "
                                           "worker died holding it); restart the server")


class Ledger:
    """Counts that :meth:`take` raises all together or not at all, each against its bound."""

    def __init__(self, shared: bool = False, lock_timeout: float = LOCK_TIMEOUT) -> None:
        self.lock_timeout = lock_timeout
        self._stuck = False          # a wait timed out once: the holder is gone, do not wait again
        if shared:
            import multiprocessing
            self._lock: Any = multiprocessing.get_context("fork").Lock()
            self._memory: mmap.mmap | bytearray = mmap.mmap(-1, _SIZE)     # MAP_SHARED
        else:
            self._lock = threading.Lock()
            self._memory = bytearray(_SIZE)
        self._counts = memoryview(self._memory).cast("q")

    @classmethod
    def shared(cls, lock_timeout: float = LOCK_TIMEOUT) -> Ledger:
        """A ledger that processes forked after this call share."""
        return cls(shared=True, lock_timeout=lock_timeout)

    def take(self, wants: Iterable[tuple[int, int, int | None]]) -> tuple[int, int] | None:
        """Add each ``(slot, amount, bound)`` unless one would pass its bound (None: no bound).
        Returns None when all were added, else ``(slot, count)`` of the first that would pass
        (nothing added)."""
        wants = tuple(wants)
        self._acquire()
        try:
            counts = self._counts
            for slot, amount, bound in wants:
                if bound is not None and counts[slot] + amount > bound:
                    return slot, counts[slot]
            for slot, amount, _ in wants:
                counts[slot] += amount
            return None
        finally:
            self._lock.release()

    def give(self, slot: int, amount: int) -> None:
        """Give back ``amount`` of what was taken in ``slot``."""
        self._acquire()
        try:
            self._counts[slot] = max(self._counts[slot] - amount, 0)
        finally:
            self._lock.release()

    def value(self, slot: int) -> int:
        return self._counts[slot]

    def _acquire(self) -> None:
        if self._lock.acquire(timeout=0 if self._stuck else self.lock_timeout):
            return
        if not self._stuck:
            self._stuck = True
            log.error("the server-wide ledger stayed locked for %g s (a worker died holding it): every "
                      "call that counts against a server-wide bound fails now; restart the server",
                      self.lock_timeout)
        raise LedgerStuck(self.lock_timeout)


# The ledger of the server-wide bounds kept outside one object (pinned regions, graphs); a
# server with workers replaces it by a shared one before it forks.
SERVER = Ledger()


def use_shared() -> Ledger:
    """Make :data:`SERVER` a shared ledger (before forking workers) and return it."""
    global SERVER
    SERVER = Ledger.shared()
    return SERVER
