"""What one connection may cost a shared server before and after it authenticated (issue 15)."""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import threading

from ..backends.base import BackendError
from ..cudafacts import curesult
from .ledger import DEVICE_MEMORY, Ledger

# Before its HELLO succeeded a connection's records stay this small (a HELLO is a few hundred
# bytes): a stranger cannot make the server buffer a large record.
PRE_HELLO_MAX_RECORD = 64 << 10
DEFAULT_HELLO_TIMEOUT = 10.0      # seconds from connecting to a successful HELLO
DEFAULT_MAX_SESSIONS = 256        # client connections at once

# A cap on one module image (bytes): the protocol allows CRICKET_MAX_IMAGE; a server takes less.
DEFAULT_MAX_IMAGE = 256 << 20
# Asynchronous work one session may have queued before its connection stops reading calls.
MAX_QUEUED_CALLS = 1024
MAX_QUEUED_BYTES = 64 << 20       # bytes those calls carry (host-to-device data)


def host_memory() -> int:
    """Bytes of physical memory on this host."""
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def default_device_memory() -> int:
    """The server-wide budget for emulated device memory, which is host memory: half of it, so
    that the host keeps room to live whatever the clients allocate."""
    return host_memory() // 2


class MemoryBudget:
    """Device memory the sessions may hold: ``per_session`` bytes each and ``total`` in all.

    An allocation past either fails with CUDA_ERROR_OUT_OF_MEMORY (cudaErrorMemoryAllocation) for
    the session that asked, before the backend is asked. ``total`` applies to emulated devices
    only unless set explicitly (a GPU bounds its own memory); None means no bound. The bytes in
    all are counted here, or in ``ledger`` (the one the workers of a server share)."""

    def __init__(self, per_session: int | None = None, total: int | None = None,
                 total_for_gpus: bool = False, ledger: Ledger | None = None) -> None:
        self.per_session = per_session
        self.total = total if total is not None else default_device_memory()
        self.total_for_gpus = total_for_gpus or total is not None
        self._held: dict[int, int] = {}       # session id -> bytes
        self._used = 0
        self._ledger = ledger
        self._lock = threading.Lock()

    def _total_for(self, emulated: bool) -> int | None:
        return self.total if emulated or self.total_for_gpus else None

    def reserve(self, session_id: int, size: int, emulated: bool) -> None:
        """Count ``size`` bytes against the session, or raise BackendError(OUT_OF_MEMORY)."""
        total = self._total_for(emulated)
        with self._lock:
            held = self._held.get(session_id, 0)
            if self.per_session is not None and held + size > self.per_session:
                raise BackendError(curesult.OUT_OF_MEMORY,
                                   f"allocating {size} bytes would take this session past its "
                                   f"share of {self.per_session} bytes (--session-memory); "
                                   f"it holds {held}")
            used = self._take(size, total)
            if used is not None:
                raise BackendError(curesult.OUT_OF_MEMORY,
                                   f"allocating {size} bytes would take the server past its device "
                                   f"memory budget of {total} bytes (--device-memory); "
                                   f"{total - used} are left")
            self._held[session_id] = held + size

    def _take(self, size: int, total: int | None) -> int | None:
        """Count ``size`` bytes in all; when that would pass ``total``, the bytes in use instead."""
        if self._ledger is not None:
            over = self._ledger.take(((DEVICE_MEMORY, size, total),))
            return None if over is None else over[1]
        if total is not None and self._used + size > total:
            return self._used
        self._used += size
        return None

    def _give(self, size: int) -> None:
        if self._ledger is not None:
            self._ledger.give(DEVICE_MEMORY, size)
        else:
            self._used -= size

    def release(self, session_id: int, size: int) -> None:
        with self._lock:
            held = self._held.get(session_id, 0)
            size = min(size, held)
            self._give(size)
            if held - size:
                self._held[session_id] = held - size
            else:
                self._held.pop(session_id, None)

    def forget(self, session_id: int) -> None:
        """The session is gone: everything it held is free."""
        with self._lock:
            self._give(self._held.pop(session_id, 0))

    def share(self, session_id: int, free: int, total: int, emulated: bool) -> tuple[int, int]:
        """(free, total) as the session may use them, from the device's own (free, total)."""
        limit = self._total_for(emulated)
        with self._lock:
            held = self._held.get(session_id, 0)
            if self.per_session is not None:
                free = min(free, self.per_session - held)
                total = min(total, self.per_session)
            if limit is not None:
                used = self._used if self._ledger is None else self._ledger.value(DEVICE_MEMORY)
                free = min(free, limit - used)
                total = min(total, limit)
        return max(free, 0), total


_libc = ctypes.CDLL(ctypes.util.find_library("c"))
_malloc_trim = getattr(_libc, "malloc_trim", None)     # glibc only


def return_free_memory() -> None:
    """Give the memory malloc holds free back to the system (glibc ``malloc_trim``), so that what a
    closed session's large buffers took does not stay in the server's RSS."""
    if _malloc_trim is not None:
        _malloc_trim(0)
