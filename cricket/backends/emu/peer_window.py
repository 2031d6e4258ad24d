"""Peer access for kernels: one device's arena and its peers' arenas in one window of addresses.

A kernel indexes device memory as one array (``DeviceArena.check`` gives indices into
``DeviceArena.view``). Each device of a session has its arena at its own device pointers (see
``cricket.backends.emu_devices``) in a memfd, so the devices a kernel may reach are mapped again,
each at its distance from the lowest, into one reserved range of this process: an address of any
of them is then ``origin + index``, and loads, stores and atomics need no second path. The
reservation is address space only (``PROT_NONE``, no memory committed); what lies between two
arenas is never touched, since every access is first checked against the live allocations of the
arena it falls in. Atomics stay atomic: a session's kernels run one at a time, and a kernel that
uses global atomics runs in one process.
"""
from __future__ import annotations

import ctypes
import logging
import mmap
import os
from typing import TYPE_CHECKING

import numpy as np

from .errors import CUDA_ERROR_OUT_OF_MEMORY, EmuError

if TYPE_CHECKING:
    from .memory import DeviceArena

log = logging.getLogger(__name__)

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
_libc.munmap.restype = ctypes.c_int
_libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
_MAP_FAILED = ctypes.c_void_p(-1).value
_MAP_FIXED = 0x10
_PROT_NONE = 0
_MAP_NORESERVE = getattr(mmap, "MAP_NORESERVE", 0x4000)


def _mmap(where: int | None, size: int, prot: int, flags: int, fd: int) -> int:
    address = _libc.mmap(where, size, prot, flags, fd, 0)
    if address in (None, _MAP_FAILED):
        err = ctypes.get_errno()
        raise EmuError(CUDA_ERROR_OUT_OF_MEMORY, f"cannot map {size >> 20} MiB of device memory for peer access "
                                                 f"({os.strerror(err)})")
    return address


class _Memory:
    """A raw range as NumPy sees a buffer (the array keeps this object, not the mapping, alive)."""

    def __init__(self, address: int, size: int) -> None:
        self.__array_interface__ = {"data": (address, False), "shape": (size,), "typestr": "|u1", "version": 3}


class PeerWindow:
    """``home`` and ``peers`` (memfd arenas) mapped at their device pointers' distances."""

    def __init__(self, home: DeviceArena, peers: list[DeviceArena]) -> None:
        arenas = [home, *peers]
        if any(a.fd is None for a in arenas):
            raise EmuError(CUDA_ERROR_OUT_OF_MEMORY, "peer access needs arenas in shared memory (kernel workers)")
        self.peers = list(peers)
        self.origin = min(a.base for a in arenas)
        self.span = max(a.base + a.size for a in arenas) - self.origin
        self._address = _mmap(None, self.span, _PROT_NONE,
                              mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | _MAP_NORESERVE, -1)
        try:
            for a in arenas:
                _mmap(self._address + a.base - self.origin, a.size, mmap.PROT_READ | mmap.PROT_WRITE,
                      mmap.MAP_SHARED | _MAP_FIXED | _MAP_NORESERVE, a.fd)
        except EmuError:
            _libc.munmap(self._address, self.span)
            raise
        self.u8: np.ndarray | None = np.asarray(_Memory(self._address, self.span))
        log.debug("peer window at %#x: %d arenas over %d GiB of addresses", self.origin, len(arenas),
                  self.span >> 30)

    def allocation_of(self, ptr: int) -> tuple[int, int] | None:
        """(start pointer, size) of the peers' live allocation holding ``ptr``, or None."""
        for peer in self.peers:
            found = peer.allocation_of(ptr)
            if found is not None:
                return found
        return None

    def covers(self, addr: np.ndarray, size: int) -> np.ndarray:
        """Which addresses start a ``size``-byte access inside a live allocation of a peer."""
        ok = np.zeros(addr.shape, bool)
        for peer in self.peers:
            ok |= peer.covers(addr, size)
        return ok

    def close(self) -> None:
        """Unmap the window (no view of it may be used afterwards)."""
        if self.u8 is not None:
            self.u8 = None
            _libc.munmap(self._address, self.span)
