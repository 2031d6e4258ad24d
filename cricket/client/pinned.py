"""Pinned (page-locked) host memory of the process: what cudaMallocHost / cudaHostAlloc /
cuMemAllocHost allocated and what cudaHostRegister / cuMemHostRegister registered, by address.

Copies from and to it may be asynchronous (``copies``); what of it is mapped into the device's
address space is ``mapped.MappedMemory``'s. With a server on this host an allocation is memory the
server maps too (``shm_pinned``): its synchronous copies are then one memcpy, the server's.
"""
from __future__ import annotations

import ctypes
import threading
from typing import Any

from cricket.client import shm_pinned
from cricket.client.errors import ERR_INVALID_VALUE, ERR_MEMORY, CudaRuntimeError
from cricket.client.windows import PAGE


class PinnedMemory:
    """``allocs`` (allocated here) and ``registered`` (the application's own memory): address ->
    bytes. ``libc`` is a ``ctypes.CDLL`` with ``posix_memalign`` and ``free`` declared."""

    def __init__(self, libc: Any) -> None:
        self._libc = libc
        self._lock = threading.Lock()
        self.allocs: dict[int, int] = {}
        self.registered: dict[int, int] = {}
        self.shared: dict[int, Any] = {}       # address -> the connection whose server maps it

    def forked(self) -> None:
        """In a forked child: the pages stay the child's (shared ones become private), a lock held
        by a thread gone is new."""
        self._lock = threading.Lock()
        for conn in {id(c): c for c in self.shared.values()}.values():
            shm_pinned.forked(conn)

    def alloc(self, size: int, conn: Any = None) -> int:
        """``size`` bytes of page-aligned host memory; their address. With ``conn`` (a session),
        memory its server maps when it can (``shm_pinned``)."""
        if conn is not None and (ptr := shm_pinned.alloc(conn, size)) is not None:
            with self._lock:
                self.allocs[ptr] = size
                self.shared[ptr] = conn
            return ptr
        out = ctypes.c_void_p()
        if self._libc.posix_memalign(ctypes.byref(out), PAGE, max(size, 1)) != 0 or not out.value:
            raise CudaRuntimeError(ERR_MEMORY, f"cannot allocate {size} bytes of host memory")
        with self._lock:
            self.allocs[out.value] = size
        return out.value

    def free(self, ptr: int) -> None:
        """Free memory from :meth:`alloc`; cudaErrorInvalidValue for any other address."""
        with self._lock:
            if self.allocs.pop(ptr, None) is None:
                raise CudaRuntimeError(ERR_INVALID_VALUE, f"{ptr:#x} was not allocated by cudaMallocHost/"
                                       "cudaHostAlloc")
            conn = self.shared.pop(ptr, None)
        if conn is not None:
            shm_pinned.free(conn, ptr)
        else:
            self._libc.free(ptr)

    def contains(self, ptr: int) -> bool:
        """True when ``ptr`` lies in pinned memory, allocated or registered."""
        for table in (self.allocs, self.registered):
            for base, size in table.items():
                if base <= ptr < base + size:
                    return True
        return False
