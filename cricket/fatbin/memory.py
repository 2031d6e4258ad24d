"""Reading device code out of this process's memory, where ``__cudaRegisterFatBinary`` points.

Every read is checked against ``/proc/self/maps`` first, so a bad pointer gives
:class:`MemoryAccessError` instead of a segmentation fault. Reads are zero-copy
memoryviews over the mapped image, so registering a large library costs the
header reads only.
"""
from __future__ import annotations

import bisect
import ctypes
import logging
import os
import threading
from dataclasses import dataclass

from .errors import MemoryAccessError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Mapping:
    start: int
    end: int
    perms: str
    offset: int
    path: str


def read_maps(pid: int | str = "self") -> list[Mapping]:
    """The mappings of a process, from ``/proc/PID/maps``."""
    out = []
    with open(f"/proc/{pid}/maps", encoding="utf-8", errors="replace") as f:
        for line in f:
            parts = line.split(maxsplit=5)
            if len(parts) < 5:
                continue
            start, end = (int(x, 16) for x in parts[0].split("-"))
            path = parts[5].strip() if len(parts) > 5 else ""
            out.append(Mapping(start, end, parts[1], int(parts[2], 16), path))
    return out


class ProcessMemory:
    """Checked reads of this process's own memory."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._maps: list[Mapping] = []
        self._starts: list[int] = []
        self._bases: dict[str, int] = {}

    def _refresh(self) -> None:
        maps = sorted(read_maps(), key=lambda m: m.start)
        bases: dict[str, int] = {}
        for m in maps:
            if m.path and m.path not in bases:
                bases[m.path] = m.start - m.offset
        with self._lock:
            self._maps = maps
            self._starts = [m.start for m in maps]
            self._bases = bases

    def _find(self, address: int) -> Mapping | None:
        i = bisect.bisect_right(self._starts, address) - 1
        if i >= 0 and self._maps[i].start <= address < self._maps[i].end:
            return self._maps[i]
        return None

    def _readable(self, address: int, size: int) -> bool:
        end = address + size
        pos = address
        while pos < end:
            m = self._find(pos)
            if m is None or "r" not in m.perms:
                return False
            pos = m.end
        return True

    def check(self, address: int, size: int, what: str) -> None:
        """Raise :class:`MemoryAccessError` unless ``[address, address+size)`` is readable."""
        if address <= 0 or size < 0 or address + size > (1 << 64):
            raise MemoryAccessError(f"{what}: address 0x{address:x} (+{size}) is not a valid pointer")
        if self._readable(address, size):
            return
        self._refresh()             # libraries may have been loaded since the last look
        if not self._readable(address, size):
            raise MemoryAccessError(f"{what}: 0x{address:x}..0x{address + size:x} is not readable memory "
                                    f"of this process; the pointer passed to __cudaRegisterFatBinary "
                                    f"is wrong or the library was unloaded")

    def view(self, address: int, size: int, what: str) -> memoryview:
        """A zero-copy view of ``size`` bytes at ``address`` (checked)."""
        self.check(address, size, what)
        if size == 0:
            return memoryview(b"")
        return memoryview((ctypes.c_char * size).from_address(address)).cast("B")

    def read(self, address: int, size: int, what: str) -> bytes:
        """A checked copy of ``size`` bytes at ``address`` (for headers and pointers)."""
        self.check(address, size, what)
        return ctypes.string_at(address, size)

    def describe(self, address: int) -> str:
        """``libfoo.so+0x50a8`` for an address inside a mapped file, else hex."""
        m = self._find(address)
        if m is None:
            self._refresh()
            m = self._find(address)
        if m is None or not m.path or m.path.startswith("["):
            return f"0x{address:x}"
        base = self._bases.get(m.path, m.start)
        return f"{os.path.basename(m.path)}+0x{address - base:x}"


_process_memory = ProcessMemory()


def process_memory() -> ProcessMemory:
    """The shared reader for this process."""
    return _process_memory
