"""Device memory: one large lazily-committed mapping, an allocator, and checked typed access.

Device pointers are ``GLOBAL_BASE + offset`` into the arena, so they look like real 64-bit device
pointers and small integers or host pointers never hit a live allocation. Generic addresses of the
shared and local windows live in their own ranges below the arena (see ``SHARED_WINDOW``).
"""
from __future__ import annotations

import bisect
import ctypes
import logging
import mmap
import os

import numpy as np

from typing import TYPE_CHECKING

from .errors import (CUDA_ERROR_ILLEGAL_ADDRESS, CUDA_ERROR_INVALID_VALUE, CUDA_ERROR_MISALIGNED_ADDRESS,
                     CUDA_ERROR_OUT_OF_MEMORY, EmuError)

if TYPE_CHECKING:
    from .peer_window import PeerWindow

log = logging.getLogger(__name__)

GLOBAL_BASE = 0x7F00_0000_0000
SHARED_WINDOW = 0x7D00_0000_0000
LOCAL_WINDOW = 0x7E00_0000_0000
WINDOW_SHIFT = 40          # address >> 40 tells the window: 0x7f global, 0x7d shared, 0x7e local
WIN_GLOBAL = GLOBAL_BASE >> WINDOW_SHIFT
WIN_SHARED = SHARED_WINDOW >> WINDOW_SHIFT
WIN_LOCAL = LOCAL_WINDOW >> WINDOW_SHIFT
ITEM_SHIFT = {1: 0, 2: 1, 4: 2, 8: 3, 16: 4}   # element size -> log2, for byte offset -> element index
ALLOC_ALIGN = 256
MAP_NORESERVE = getattr(mmap, "MAP_NORESERVE", 0x4000)
DEFAULT_ARENA = 16 << 30

_U64 = np.uint64


def _align(n: int, a: int) -> int:
    return (n + a - 1) // a * a


class DeviceArena:
    """A ``MAP_NORESERVE`` anonymous mapping with a first-fit allocator and an allocation table.

    Untouched pages cost nothing; freed ranges are returned to the kernel with ``madvise``.
    ``check(addr, size)`` validates kernel accesses against the live allocations.

    With ``shared`` the mapping is a memfd (:attr:`fd`) that a kernel worker process maps too
    (:meth:`attach`); the allocation table travels to it as :meth:`state` (and back, if a kernel
    allocated), :attr:`version` telling whether it changed.
    """

    def __init__(self, size: int = DEFAULT_ARENA, shared: bool = False, fd: int | None = None,
                 base: int = GLOBAL_BASE) -> None:
        if size <= 0 or size % mmap.PAGESIZE:
            raise EmuError(CUDA_ERROR_INVALID_VALUE, f"arena size {size} must be a positive multiple of the page size")
        if base >> WINDOW_SHIFT != WIN_GLOBAL or (base + size - 1) >> WINDOW_SHIFT != WIN_GLOBAL:
            raise EmuError(CUDA_ERROR_INVALID_VALUE, f"arena [{base:#x}, +{size}) leaves the global window")
        self.size = size
        self.base = base                 # the device pointer of offset 0 (each device its own range)
        self.fd: int | None = None
        try:
            if shared or fd is not None:
                if fd is None:
                    fd = os.memfd_create("cricket-emu-arena", os.MFD_CLOEXEC)
                    try:
                        os.ftruncate(fd, size)
                    except OSError:
                        os.close(fd)
                        raise
                self.fd = fd
                self._map = mmap.mmap(fd, size, flags=mmap.MAP_SHARED | MAP_NORESERVE)
            else:
                self._map = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | MAP_NORESERVE)
        except OSError as e:
            raise EmuError(CUDA_ERROR_OUT_OF_MEMORY,
                           f"cannot reserve a {size >> 20} MiB device arena ({e}); choose a smaller arena_size "
                           "(the host may not allow overcommitting memory)") from e
        self.version = 0                                    # counts changes of the allocation table
        self.u8 = np.frombuffer(self._map, dtype=np.uint8)
        self._mv = memoryview(self._map)                 # byte access for host copies
        pin = ctypes.c_char.from_buffer(self._map)      # for the address only; released at once
        self.address = ctypes.addressof(pin)             # of offset 0 in this process
        del pin
        self._ro = self._mv.toreadonly()                 # what read_view hands out
        self._views: dict[np.dtype, np.ndarray] = {}
        self._free: list[tuple[int, int]] = [(0, size)]     # (offset, size), sorted by offset
        self._starts: list[int] = []                        # live allocations, sorted by offset
        self._sizes: dict[int, int] = {}
        self._tab_starts = np.zeros(0, np.uint64)
        self._tab_ends = np.zeros(0, np.uint64)
        self.used = 0
        self.window: PeerWindow | None = None     # other devices' arenas kernels may reach (peer access)

    # ---- allocation -------------------------------------------------------------------------
    def alloc(self, size: int) -> int:
        """Reserve ``size`` bytes (256-byte aligned) and return the device pointer."""
        if size < 0:
            raise EmuError(CUDA_ERROR_INVALID_VALUE, f"negative allocation size {size}")
        need = _align(max(size, 1), ALLOC_ALIGN)
        for k, (off, free) in enumerate(self._free):
            if free >= need:
                if free == need:
                    del self._free[k]
                else:
                    self._free[k] = (off + need, free - need)
                bisect.insort(self._starts, off)
                self._sizes[off] = size
                self.used += need
                self._rebuild_table()
                return self.base + off
        raise EmuError(CUDA_ERROR_OUT_OF_MEMORY,
                       f"cannot allocate {size} bytes: {self.size - self.used} of {self.size} bytes free "
                       "(fragmented or exhausted); free memory or start the backend with a larger arena")

    def free(self, ptr: int) -> None:
        """Release the allocation that starts at ``ptr``."""
        off = ptr - self.base
        if off not in self._sizes:
            raise EmuError(CUDA_ERROR_INVALID_VALUE, f"{ptr:#x} is not the start of a live device allocation")
        size = self._sizes.pop(off)
        self._starts.remove(off)
        need = _align(max(size, 1), ALLOC_ALIGN)
        self.used -= need
        if need >= (1 << 20):
            start = _align(off, mmap.PAGESIZE)
            end = (off + need) // mmap.PAGESIZE * mmap.PAGESIZE
            if end > start and hasattr(self._map, "madvise"):
                # a shared mapping keeps its pages in the memfd until they are removed from it
                advice = mmap.MADV_REMOVE if self.fd is not None else mmap.MADV_DONTNEED
                self._map.madvise(advice, start, end - start)
        k = bisect.bisect_left(self._free, (off, 0))
        self._free.insert(k, (off, need))
        # coalesce with neighbours
        if k + 1 < len(self._free) and self._free[k][0] + self._free[k][1] == self._free[k + 1][0]:
            self._free[k] = (off, self._free[k][1] + self._free[k + 1][1])
            del self._free[k + 1]
        if k > 0 and self._free[k - 1][0] + self._free[k - 1][1] == self._free[k][0]:
            self._free[k - 1] = (self._free[k - 1][0], self._free[k - 1][1] + self._free[k][1])
            del self._free[k]
        self._rebuild_table()

    def state(self) -> tuple:
        """The allocator's state (free ranges, live allocations, bytes used), for :meth:`load_state`."""
        return list(self._free), dict(self._sizes), self.used

    def load_state(self, state) -> None:
        """Take the allocator state of the same arena as seen by another process."""
        free, sizes, used = state
        self._free = [(int(o), int(n)) for o, n in free]
        self._sizes = {int(o): int(n) for o, n in dict(sizes).items()}
        self._starts = sorted(self._sizes)
        self.used = int(used)
        self._rebuild_table()

    def _rebuild_table(self) -> None:
        self.version += 1
        self._tab_starts = np.array(self._starts, dtype=np.uint64)
        self._tab_ends = np.array([s + self._sizes[s] for s in self._starts], dtype=np.uint64)

    def allocation_of(self, ptr: int) -> tuple[int, int] | None:
        """(start pointer, size) of the live allocation holding ``ptr``, or None."""
        s = self._start_holding(ptr - self.base)
        return None if s < 0 else (self.base + s, self._sizes[s])

    def _start_holding(self, off: int) -> int:
        """The arena offset of the live allocation holding arena offset ``off``, or -1 (a size-0
        allocation holds its start)."""
        k = bisect.bisect_right(self._starts, off) - 1
        if k >= 0:
            s = self._starts[k]
            if off < s + max(self._sizes[s], 1):
                return s
        return -1

    # ---- host-side copies -------------------------------------------------------------------
    def host_range(self, ptr: int, size: int, what: str) -> int:
        """Check that [ptr, ptr+size) lies inside one live allocation; return its arena offset."""
        if size < 0:
            raise EmuError(CUDA_ERROR_INVALID_VALUE, f"{what}: negative size {size}")
        off = ptr - self.base
        s = self._start_holding(off)
        if s >= 0 and off + size <= s + self._sizes[s]:
            return off
        raise EmuError(CUDA_ERROR_INVALID_VALUE,
                       f"{what}: [{ptr:#x}, +{size}) is not inside a live device allocation")

    def host_address(self, ptr: int, size: int) -> int | None:
        """Where [ptr, ptr+size) is in this process when it lies inside one live allocation (what
        :meth:`host_range` checks), else None."""
        off = ptr - self.base
        s = self._start_holding(off) if size >= 0 and self.address else -1
        return self.address + off if s >= 0 and off + size <= s + self._sizes[s] else None

    def write(self, ptr: int, data) -> None:
        """Copy host bytes (any buffer, a view into a received record included) into the arena."""
        mv = memoryview(data)
        if mv.ndim != 1 or mv.itemsize != 1 or not mv.c_contiguous:
            mv = mv.cast("B") if mv.c_contiguous else memoryview(mv.tobytes())
        off = self.host_range(ptr, mv.nbytes, "copy to device")
        self._mv[off:off + mv.nbytes] = mv

    def read_into(self, ptr: int, into) -> None:
        """Copy device bytes at ``ptr`` into a writable host buffer (no intermediate copy)."""
        mv = memoryview(into)
        if mv.format != "B" or mv.ndim != 1:
            mv = mv.cast("B")
        off = self.host_range(ptr, mv.nbytes, "copy from device")
        mv[:] = self._mv[off:off + mv.nbytes]     # a memmove, without two NumPy arrays per copy

    def read(self, ptr: int, size: int) -> bytes:
        off = self.host_range(ptr, size, "copy from device")
        return self._mv[off:off + size].tobytes()

    def read_view(self, ptr: int, size: int) -> memoryview:
        """A read-only view of [ptr, ptr+size) (no copy). It shows later writes to that memory, and
        a freed range may read as zeros: use it before the memory is written or freed again."""
        off = self.host_range(ptr, size, "copy from device")
        return self._ro[off:off + size]

    def write_view(self, ptr: int, size: int) -> memoryview:
        """A writable view of [ptr, ptr+size) (no copy): bytes put there are device memory."""
        off = self.host_range(ptr, size, "copy to device")
        return self._mv[off:off + size]

    def view(self, dtype) -> np.ndarray:
        """What :meth:`check`'s indices index: the whole arena as an array of ``dtype`` (no copy),
        or with peers (:meth:`set_peers`) the window holding this arena and theirs."""
        dt = np.dtype(dtype)
        v = self._views.get(dt)
        if v is None:
            u8 = self.u8 if self.window is None else self.window.u8
            v = u8[: len(u8) // dt.itemsize * dt.itemsize].view(dt)
            self._views[dt] = v
        return v

    def set_peers(self, peers: list["DeviceArena"]) -> None:
        """Let kernels on this arena reach the live allocations of ``peers`` too (memfd arenas of
        other devices, at their own device pointers); an empty list takes that away."""
        from .peer_window import PeerWindow
        self._views.clear()
        if self.window is not None:
            self.window.close()
            self.window = None
        if peers:
            self.window = PeerWindow(self, peers)

    # ---- kernel access checks ---------------------------------------------------------------
    def check(self, addr, size: int, elem: int):
        """Validate global addresses (scalar or uint64 array) for an access of ``size`` bytes.

        Returns the index into ``view`` of ``elem``-byte elements. Raises 716 for a misaligned address and
        700 for one outside every live allocation.
        """
        if isinstance(addr, np.ndarray):
            if addr.size == 0:
                return addr.astype(np.intp)
            if addr.dtype != np.uint64:
                addr = addr.astype(np.uint64) if addr.dtype.itemsize < 8 else addr.view(np.uint64)
            if size > 1 and int(np.bitwise_or.reduce(addr)) & (size - 1):
                bad = addr[(addr & _U64(size - 1)) != 0][0]
                raise EmuError(CUDA_ERROR_MISALIGNED_ADDRESS,
                               f"misaligned {size}-byte access at address {int(bad):#x}")
            lo = int(addr.min())
            hi = int(addr.max())
            a = self.allocation_of(lo)
            if a is None and self.window is not None:
                a = self.window.allocation_of(lo)
            if a is None or hi + size > a[0] + a[1]:
                self._check_each(addr, size)
            # every address is inside the arena (or a peer's) now, so the int64 view is exact
            origin = self.base if self.window is None else self.window.origin
            return (addr.view(np.int64) - origin) >> ITEM_SHIFT[elem]
        a_int = int(addr)
        if size > 1 and a_int % size:
            raise EmuError(CUDA_ERROR_MISALIGNED_ADDRESS, f"misaligned {size}-byte access at address {a_int:#x}")
        a = self.allocation_of(a_int)
        if a is None and self.window is not None:
            a = self.window.allocation_of(a_int)
        if a is None or a_int + size > a[0] + a[1]:
            raise EmuError(CUDA_ERROR_ILLEGAL_ADDRESS, self._describe(a_int, size))
        return (a_int - (self.base if self.window is None else self.window.origin)) // elem

    def covers(self, addr: np.ndarray, size: int) -> np.ndarray:
        """Which of the addresses start a ``size``-byte access inside one live allocation."""
        off = addr - _U64(self.base)
        k = np.searchsorted(self._tab_starts, off, side="right").astype(np.intp) - 1
        ok = k >= 0
        kk = np.where(ok, k, 0)
        if len(self._tab_starts):
            ok &= (off + _U64(size)) <= self._tab_ends[kk]
            ok &= addr >= _U64(self.base)
        else:
            ok[:] = False
        return ok

    def _check_each(self, addr: np.ndarray, size: int) -> None:
        ok = self.covers(addr, size)
        if self.window is not None and not ok.all():
            ok |= self.window.covers(addr, size)
        if not ok.all():
            bad = int(addr[~ok][0])
            raise EmuError(CUDA_ERROR_ILLEGAL_ADDRESS, self._describe(bad, size))

    def _describe(self, addr: int, size: int) -> str:
        near = ""
        off = addr - self.base
        k = bisect.bisect_right(self._starts, off) - 1
        if 0 <= off < self.size and k >= 0:
            s = self._starts[k]
            near = f"; nearest allocation below is {self.base + s:#x} of {self._sizes[s]} bytes"
        return f"{size}-byte access at address {addr:#x} is outside every live allocation{near}"

    def close(self) -> None:
        self.address = 0                     # host_address answers None from now on
        self._views.clear()
        if self.window is not None:
            self.window.close()
            self.window = None
        self.u8 = None  # type: ignore[assignment]
        self._ro.release()
        self._mv.release()
        try:
            self._map.close()
        except BufferError:   # views still exported somewhere; the mapping goes with them
            log.debug("arena mapping still referenced; left to the garbage collector")
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
