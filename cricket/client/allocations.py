"""The device allocations of this process: start -> size, the starts in order, and the device of
each one not on device 0. The one place that finds the allocation an address falls in
(:meth:`AllocationTable.allocation_at`); its callers differ only in what they ask of the answer."""
from __future__ import annotations

from bisect import bisect_right


class AllocationTable:
    """Lookups take no lock (they read ``starts`` and ``sizes`` as they stand); the ``Runtime``
    changes the table under its lock."""

    def __init__(self) -> None:
        self.sizes: dict[int, int] = {}        # allocation start -> size
        self.starts: list[int] = []            # sorted
        self.devices: dict[int, int] = {}      # allocation start -> its device, if not 0

    def add(self, ptr: int, size: int, device: int = 0) -> None:
        self.sizes[ptr] = size
        self.starts.insert(bisect_right(self.starts, ptr), ptr)
        if device:
            self.devices[ptr] = device

    def remove(self, ptr: int) -> int | None:
        """Forget the allocation at ``ptr``; its size, or None when there is none."""
        size = self.sizes.pop(ptr, None)
        if size is not None:
            del self.starts[bisect_right(self.starts, ptr) - 1]
            self.devices.pop(ptr, None)
        return size

    def clear(self) -> None:
        self.sizes.clear()
        self.starts.clear()
        self.devices.clear()

    def allocation_at(self, ptr: int) -> tuple[int, int] | None:
        """(start, size) of the allocation holding address ``ptr``, its end excluded; an allocation
        of size 0 holds its start address (as the driver's address queries answer it)."""
        starts = self.starts
        i = bisect_right(starts, ptr) - 1
        if i >= 0:
            start = starts[i]
            size = self.sizes.get(start, 0)
            if ptr < start + (size or 1):
                return start, size
        return None

    def overlapping(self, ptr: int, size: int) -> int | None:
        """The start of an allocation that shares a byte with [ptr, ptr+size) (``size`` > 0): the
        one starting nearest below its end, if it reaches past ``ptr``."""
        starts = self.starts
        i = bisect_right(starts, ptr + size - 1) - 1
        if i >= 0 and ptr < starts[i] + self.sizes.get(starts[i], 0):
            return starts[i]
        return None
