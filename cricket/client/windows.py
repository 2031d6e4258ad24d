"""Device address windows: the parts of this process's address space that device pointers own.

Device allocations come back with addresses the server chose. So that a device pointer is never
also a host address of this process (``cudaMemcpyDefault`` and ``cudaPointerGetAttributes`` tell
them apart by address), the client reserves the 1 TiB window around each one (``PROT_NONE``,
no memory), or failing that the 2 MiB chunks it touches. Mapped pinned memory (``mapped``) maps
host pages inside these reservations.
"""
from __future__ import annotations

import ctypes
import logging
import os
import threading
from typing import Any

log = logging.getLogger(__name__)

# cudaMemcpyKind
H2H, H2D, D2H, D2D, DEFAULT = range(5)

WINDOW_SHIFT = 40                      # device address windows are reserved 1 TiB at a time
CHUNK_SHIFT = 21                       # ... or 2 MiB at a time where host mappings share the window
PAGE = 4096


class AddressWindows:
    """The windows and chunks reserved in this process (``libc``: a ``ctypes.CDLL`` of libc with
    ``mmap``/``munmap`` typed). A forked child keeps the reservations (fork copies the mappings)."""

    def __init__(self, libc: Any) -> None:
        self._libc = libc
        self._lock = threading.Lock()
        # a lock held by a thread that does not exist in the child would never be released
        os.register_at_fork(after_in_child=self._new_lock)
        self.windows: set[int] = set()             # reserved device windows (address >> 40)
        self.chunks: set[int] = set()              # reserved 2 MiB chunks (address >> 21)

    def _new_lock(self) -> None:
        self._lock = threading.Lock()

    def covers(self, ptr: int) -> bool:
        """True when ``ptr`` lies in a reserved window or chunk."""
        return (ptr >> WINDOW_SHIFT) in self.windows or (ptr >> CHUNK_SHIFT) in self.chunks

    def covers_range(self, addr: int, length: int) -> bool:
        """True when every 2 MiB chunk of [addr, addr+length) is reserved."""
        return all((chunk << CHUNK_SHIFT >> WINDOW_SHIFT) in self.windows or chunk in self.chunks
                   for chunk in range(addr >> CHUNK_SHIFT, ((addr + length - 1) >> CHUNK_SHIFT) + 1))

    def reserve(self, ptr: int, size: int) -> None:
        """Keep host mappings out of the device addresses in [ptr, ptr+size): reserve the 1 TiB
        window around them (PROT_NONE, no memory), or failing that just their pages."""
        window = ptr >> WINDOW_SHIFT
        if window in self.windows or not ptr:
            return
        with self._lock:
            if window in self.windows:
                return
            if self.map_none(window << WINDOW_SHIFT, 1 << WINDOW_SHIFT):
                self.windows.add(window)
                log.debug("reserved device window %#x-%#x", window << WINDOW_SHIFT,
                          (window + 1) << WINDOW_SHIFT)
                return
            # Host mappings lie in this window: reserve the 2 MiB chunks the allocation touches.
            for chunk in range(ptr >> CHUNK_SHIFT, ((ptr + max(size, 1) - 1) >> CHUNK_SHIFT) + 1):
                if chunk in self.chunks:
                    continue
                if self.map_none(chunk << CHUNK_SHIFT, 1 << CHUNK_SHIFT):
                    self.chunks.add(chunk)
                else:
                    log.warning("device memory at %#x (%d bytes) overlaps host memory of this "
                                "process; pointer classification (cudaMemcpyDefault) may be wrong",
                                ptr, size)

    def map_none(self, addr: int, length: int) -> bool:
        prot_none, flags = 0, 0x02 | 0x20 | 0x4000 | 0x100000   # PRIVATE|ANONYMOUS|NORESERVE|FIXED_NOREPLACE
        got = self._libc.mmap(addr, length, prot_none, flags, -1, 0)
        if got == addr:
            return True
        if got not in (None, ctypes.c_void_p(-1).value):
            self._libc.munmap(got, length)       # an old kernel ignored FIXED_NOREPLACE
        return False
