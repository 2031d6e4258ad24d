"""Mapped pinned memory: host memory that kernels read and write through a device address.

The server cannot reach the application's memory, so each mapped host range is backed by a device
allocation of its size, and the two are kept coherent as CUDA keeps them for a device without
concurrent host access:

- before a launch, when the host may have written the ranges since they were last sent
  (``host_dirty``), every range goes to its device copy, in the launch's stream
  (``Runtime.queue_launch`` and the driver's launch with an ``extra`` buffer call
  :meth:`MappedMemory.before_launch`);
- after a synchronising call that follows a launch (``device_dirty``) every range comes back,
  except those registered read-only: :meth:`MappedMemory.after_sync` runs after device, stream and
  event synchronisation, a stream or event query that says done, and a blocking copy;
- a copy or memset that names either address of a range works on the host bytes (brought up to
  date first), so both the host and later launches see it.

Memory from ``cudaHostAlloc(..., cudaHostAllocMapped)`` is placed at the device address itself (in
the device address window the runtime reserves), so its host pointer is its device pointer, as
under unified addressing. Registered memory keeps its address: its device pointer is the backing's
(``cudaDevAttrCanUseHostPointerForRegisteredMem`` is 0).

The flags of every pinned range are kept here too, for ``cudaHostGetFlags``/``cuMemHostGetFlags``.
"""
from __future__ import annotations

import ctypes
import logging
import threading
from dataclasses import dataclass
from typing import Any

from cricket.client.windows import D2D, D2H, DEFAULT, H2D, H2H

log = logging.getLogger(__name__)

# cudaHostAlloc* / CU_MEMHOSTALLOC_* and cudaHostRegister* / CU_MEMHOSTREGISTER_* (same values)
ALLOC_PORTABLE, ALLOC_MAPPED, ALLOC_WRITE_COMBINED = 0x1, 0x2, 0x4
ALLOC_FLAGS = ALLOC_PORTABLE | ALLOC_MAPPED | ALLOC_WRITE_COMBINED
REGISTER_PORTABLE, REGISTER_MAPPED, REGISTER_IO_MEMORY, REGISTER_READ_ONLY = 0x1, 0x2, 0x4, 0x8
REGISTER_FLAGS = REGISTER_PORTABLE | REGISTER_MAPPED | REGISTER_IO_MEMORY | REGISTER_READ_ONLY

PAGE = 4096
_PROT_RW = 0x1 | 0x2
_MAP_PRIVATE, _MAP_FIXED, _MAP_ANONYMOUS, _MAP_NORESERVE = 0x02, 0x10, 0x20, 0x4000


def _round_up(n: int, to: int) -> int:
    return (n + to - 1) // to * to


@dataclass
class MappedRange:
    """One mapped host range and the device memory behind it."""

    host: int
    device: int
    size: int
    backing: int              # the device allocation (``device`` lies in it, page aligned)
    shared_address: bool      # the host memory is mapped at the device address (host == device)
    read_only: bool = False   # registered read-only: kernels do not write it, it is never pulled
    # managed memory (cricket.client.managed): a copy of what the device holds, page-rounded, so
    # that only the pages the host changed are pushed before a launch
    snapshot: Any = None


class MappedMemory:
    """The process's mapped host ranges (one per runtime; see the module docstring)."""

    def __init__(self, runtime: Any) -> None:
        self.rt = runtime
        self.ranges: dict[int, MappedRange] = {}       # host address -> range
        self.flags: dict[int, int] = {}                # pinned host address -> its allocation flags
        # host memory mapped at a device address -> its length; kept past a device reset, which
        # forgets the ranges but leaves the application its memory until cudaFreeHost
        self.at_device_address: dict[int, int] = {}
        self.host_dirty = False                        # the host may have written since the last push
        self.device_dirty = False                      # a kernel may have written since the last pull
        self._lock = threading.RLock()

    # --- allocation -------------------------------------------------------------------------

    def host_alloc(self, size: int, flags: int) -> int:
        """Pinned host memory; mapped (at its device address where possible) with ALLOC_MAPPED."""
        rt = self.rt
        if not flags & ALLOC_MAPPED:
            ptr = rt.host_alloc(size)
            self.flags[ptr] = flags
            return ptr
        conn = rt.conn
        length = _round_up(max(size, 1), PAGE)
        span = length + PAGE
        backing = conn._check(conn._stub.CR_MEM_ALLOC(span), "cuMemHostAlloc").ptr
        rt.add_allocation(backing, span)
        device = _round_up(backing, PAGE)
        if self._map_fixed(device, length):
            host, shared = device, True
            self.at_device_address[host] = length
            with rt._lock:
                rt.host_allocs[host] = size
        else:
            try:
                host, shared = rt.host_alloc(size), False
            except BaseException:
                rt.free_allocation(backing)
                raise
        with self._lock:
            self.ranges[host] = MappedRange(host, device, size, backing, shared)
            self.flags[host] = flags
            self.host_dirty = True
        log.debug("mapped host memory %#x (%d bytes) at device %#x", host, size, device)
        return host

    def host_free(self, ptr: int) -> None:
        """Free pinned memory from :meth:`host_alloc` (the runtime's own check names a bad one)."""
        rt = self.rt
        if ptr not in rt.host_allocs:
            return rt.host_free(ptr)        # raises: not memory from cudaMallocHost/cudaHostAlloc
        with self._lock:
            r = self.ranges.pop(ptr, None)
            self.flags.pop(ptr, None)
            length = self.at_device_address.pop(ptr, None)
        if length is None:
            rt.host_free(ptr)
        else:
            with rt._lock:
                rt.host_allocs.pop(ptr, None)
            self._unmap(ptr, length)
        if r is not None:
            self._release(r)

    def register(self, ptr: int, size: int, flags: int) -> None:
        """Pin (register) [ptr, ptr+size); with REGISTER_MAPPED, back it by device memory."""
        rt = self.rt
        if flags & REGISTER_MAPPED:
            self._map_registered(ptr, size).read_only = bool(flags & REGISTER_READ_ONLY)
        with rt._lock:
            rt.host_registered[ptr] = size
        self.flags[ptr] = flags

    def unregister(self, ptr: int) -> None:
        with self._lock:
            r = self.ranges.pop(ptr, None)
            self.flags.pop(ptr, None)
        if r is not None:
            self._release(r)

    def _map_registered(self, ptr: int, size: int) -> MappedRange:
        rt = self.rt
        conn = rt.conn
        backing = conn._check(conn._stub.CR_MEM_ALLOC(size), "cuMemHostRegister").ptr
        rt.add_allocation(backing, size)
        r = MappedRange(ptr, backing, size, backing, False)
        with self._lock:
            self.ranges[ptr] = r
            self.host_dirty = True
        return r

    def _release(self, r: MappedRange) -> None:
        rt = self.rt
        if r.backing in rt.allocations:
            try:
                rt.free_allocation(r.backing)
            except Exception as exc:        # the session may be gone; the host side is freed anyway
                log.debug("freeing the device copy of mapped memory %#x: %s", r.host, exc)

    def forget(self) -> None:
        """The device memory is gone (a device reset): the ranges are plain pinned memory now."""
        with self._lock:
            self.ranges.clear()
            self.device_dirty = self.host_dirty = False

    def _map_fixed(self, addr: int, length: int) -> bool:
        """Map read-write memory at ``addr``, only over the runtime's own reservation there."""
        rt = self.rt
        if not rt.address_windows.covers_range(addr, length):
            return False
        if any(a < addr + length and addr < a + n for a, n in self.at_device_address.items()):
            return False        # memory the application still holds from before a device reset
        got = rt._libc.mmap(addr, length, _PROT_RW, _MAP_PRIVATE | _MAP_ANONYMOUS | _MAP_FIXED, -1, 0)
        return got == addr

    def _unmap(self, addr: int, length: int) -> None:
        """Give the pages back to the runtime's reservation (no access, no memory)."""
        got = self.rt._libc.mmap(addr, length, 0, _MAP_PRIVATE | _MAP_ANONYMOUS | _MAP_FIXED | _MAP_NORESERVE,
                                 -1, 0)
        if got != addr:
            log.warning("could not return mapped memory %#x (%d bytes) to the device window: errno %d",
                        addr, length, ctypes.get_errno())

    # --- lookups ----------------------------------------------------------------------------

    def find(self, ptr: int) -> tuple[MappedRange, int] | None:
        """The range whose host or device side holds ``ptr``, and the offset of ``ptr`` in it."""
        for r in tuple(self.ranges.values()):       # another thread may map or free meanwhile
            if r.host <= ptr < r.host + max(r.size, 1):
                return r, ptr - r.host
            if r.device <= ptr < r.device + max(r.size, 1):
                return r, ptr - r.device
        return None

    def device_pointer(self, ptr: int) -> int | None:
        """The device address of pinned host address ``ptr``; pinned memory that is not mapped yet
        gets its device copy now (``cudaHostGetDevicePointer`` maps any pinned memory)."""
        found = self.find(ptr)
        if found is not None:
            return found[0].device + found[1]
        rt = self.rt
        for table in (rt.host_registered, rt.host_allocs):
            for base, size in list(table.items()):
                if base <= ptr < base + max(size, 1):
                    r = self._map_registered(base, size)
                    return r.device + (ptr - base)
        return None

    def host_flags(self, ptr: int) -> int | None:
        """The flags ``ptr``'s pinned range was allocated or registered with (None: not pinned);
        a mapped range reports the mapped flag however it got its device copy."""
        rt = self.rt
        for table in (rt.host_allocs, rt.host_registered):
            for base, size in tuple(table.items()):
                if base <= ptr < base + max(size, 1):
                    return self.flags.get(base, 0) | (ALLOC_MAPPED if base in self.ranges else 0)
        return None

    # --- coherence --------------------------------------------------------------------------

    def before_launch(self, stream: int) -> None:
        """A kernel is about to run in ``stream`` (a server handle): send the host's writes."""
        with self._lock:
            if self.host_dirty:
                self.host_dirty = False
                for r in self.ranges.values():
                    if r.snapshot is None:
                        self.rt.htod(r.device, r.host, r.size, stream, False)
                    else:
                        push_changed_pages(self.rt, r, stream)
            self.device_dirty = True

    def after_sync(self) -> None:
        """A synchronising call: bring back what kernels may have written since the last one."""
        if not self.device_dirty:
            return
        with self._lock:
            if not self.device_dirty:
                return
            self.device_dirty = False
            self.host_dirty = True
            for r in self.ranges.values():
                if not r.read_only:
                    self.rt.dtoh(r.host, r.device, r.size, 0)
                if r.snapshot is not None:
                    ctypes.memmove(r.snapshot.ctypes.data, r.host, r.size)

    def resolve_copy(self, dst: int, src: int, kind: int) -> tuple[int, int, int]:
        """A copy naming mapped memory works on its host side: (dst, src, kind), ``kind`` being
        what the two addresses now are (never DEFAULT). An asynchronous copy into the host side
        may complete later: the push before the next launch waits for it (``Runtime.htod``
        settles deferred copies into its source first)."""
        d, s = self.find(dst), self.find(src)
        if d is None and s is None:
            return dst, src, kind
        self.after_sync()
        is_device = self.rt.is_device
        dst_device = is_device(dst) if kind == DEFAULT else kind in (H2D, D2D)
        src_device = is_device(src) if kind == DEFAULT else kind in (D2H, D2D)
        if d is not None:
            dst, dst_device = d[0].host + d[1], False
            self.host_dirty = True
        if s is not None:
            src, src_device = s[0].host + s[1], False
        return dst, src, (D2D if dst_device else D2H) if src_device else (H2D if dst_device else H2H)

    def host_side(self, ptr: int) -> int | None:
        """For a memset: the host address of mapped ``ptr`` after bringing it up to date."""
        found = self.find(ptr)
        if found is None:
            return None
        self.after_sync()
        self.host_dirty = True
        return found[0].host + found[1]


def push_changed_pages(rt: Any, r: MappedRange, stream: int) -> int:
    """Send the pages of managed range ``r`` (pages counted from its start) whose bytes differ from
    its snapshot (what the device holds), in runs of adjacent pages, and update the snapshot;
    returns the bytes sent."""
    import numpy as np      # only here: the CUDA shim's client starts without NumPy
    n = r.size
    if rt.copies.pending:   # an asynchronous copy into the range lands before it is compared
        rt.settle_host_range(r.host, n)
    host = np.ctypeslib.as_array((ctypes.c_uint8 * n).from_address(r.host))
    snap = r.snapshot[:n]
    full = n // PAGE * PAGE
    dirty = (host[:full].view(np.uint64).reshape(-1, PAGE // 8)
             != snap[:full].view(np.uint64).reshape(-1, PAGE // 8)).any(axis=1)
    if full < n:
        dirty = np.append(dirty, bool((host[full:] != snap[full:]).any()))
    if not dirty.any():
        return 0
    edges = np.flatnonzero(np.diff(np.concatenate(([0], dirty.view(np.int8), [0]))))
    sent = 0
    for first, end in zip(edges[::2].tolist(), edges[1::2].tolist()):
        start, stop = first * PAGE, min(end * PAGE, n)
        rt.htod(r.device + start, r.host + start, stop - start, stream, False)
        snap[start:stop] = host[start:stop]
        sent += stop - start
    return sent
