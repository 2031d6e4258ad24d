"""Device-side ``malloc``/``free`` (and C++ ``new``/``delete``, which nvcc lowers to them).

Each emulated device (one per context) has one heap: a single allocation in its device memory,
reserved at the first launch of a kernel that calls malloc or free, of the size set with
``cudaDeviceSetLimit(cudaLimitMallocHeapSize)`` (8 MiB by default, as on a GPU; the limit cannot
change after such a launch). It is carved in 16-byte granules; its bookkeeping (block lengths and a
granule-in-use map) lives in device memory in front of it, so that any process mapping the arena
sees the same heap. ``malloc`` returns NULL when no free run is long enough.
"""
from __future__ import annotations

import logging

import numpy as np

from ...cudafacts.limits import DEFAULTS, MALLOC_HEAP_SIZE
from .errors import CUDA_ERROR_ILLEGAL_ADDRESS, CUDA_ERROR_INVALID_VALUE, EmuError, not_supported
from .ptx.ast import Instr

log = logging.getLogger(__name__)

DEFAULT_HEAP_SIZE = DEFAULTS[MALLOC_HEAP_SIZE]
GRANULE = 16                     # alignment and unit of a device malloc
_U64 = np.uint64


class DeviceHeap:
    """The malloc heap of one emulated device (``arena``)."""

    def __init__(self, arena, size: int = DEFAULT_HEAP_SIZE) -> None:
        self.arena = arena
        self.size = size
        self.base = 0              # device address of the first granule once reserved
        self._lengths: np.ndarray | None = None    # granules of the block starting at each granule
        self._used: np.ndarray | None = None       # 1 where a granule belongs to a live block
        self._cursor = 0           # next-fit start

    @property
    def reserved(self) -> bool:
        return self._used is not None

    def set_size(self, size: int) -> None:
        """cudaLimitMallocHeapSize: refused once a kernel using the heap has run."""
        if self.reserved:
            raise EmuError(CUDA_ERROR_INVALID_VALUE, "the malloc heap size cannot change after a kernel that "
                                                     "calls malloc or free was launched")
        if size < 0:
            raise EmuError(CUDA_ERROR_INVALID_VALUE, f"negative malloc heap size {size}")
        self.size = -(-size // GRANULE) * GRANULE

    def reserve(self) -> None:
        if self.reserved:
            return
        start = self.arena.alloc(self._meta() + self.size)
        self._map(start + self._meta())
        self._lengths[:] = 0
        self._used[:] = 0
        log.debug("device malloc heap of %d bytes at %#x", self.size, self.base)

    def _meta(self) -> int:
        """Bytes of bookkeeping in front of the heap (a length and a used flag per granule)."""
        return -(-(self.size // GRANULE) * 5 // GRANULE) * GRANULE

    def _map(self, base: int) -> None:
        """Use the heap (bookkeeping included) that lies in the arena at ``base``."""
        granules = self.size // GRANULE
        view = self.arena.write_view(base - self._meta(), self._meta() + granules * GRANULE)
        self._lengths = np.frombuffer(view, np.uint32, granules, 0)
        self._used = np.frombuffer(view, np.uint8, granules, granules * 4)
        self.base = base

    # ---- handing over to a worker process ------------------------------------------------------
    def state(self) -> dict[str, int]:
        """What another process mapping the same arena needs to use this heap."""
        return {"size": self.size, "base": self.base, "cursor": self._cursor}

    def adopt(self, state: dict[str, int]) -> None:
        """Take the size, place and cursor of the same heap from another process (a kernel worker,
        or the server that sent the launch). Bounds come from the arena: a bad place faults."""
        size, base, cursor = (int(state[k]) for k in ("size", "base", "cursor"))
        if size < 0 or size % GRANULE or not 0 <= cursor <= size // GRANULE:
            raise EmuError(CUDA_ERROR_INVALID_VALUE, f"malformed malloc heap state {state}")
        if base and (not self.reserved or base != self.base or size != self.size):
            self.size = size
            self._map(base)
        elif not base:
            self.size = size
        self._cursor = cursor

    # ---- allocation -------------------------------------------------------------------------
    def malloc(self, sizes: np.ndarray) -> np.ndarray:
        """Addresses for ``sizes`` (bytes, in lane order); 0 where the heap has no room."""
        self.reserve()
        need = (sizes.astype(np.int64) + GRANULE - 1) // GRANULE
        out = np.zeros(len(sizes), _U64)
        total = int(need.sum())
        used = self._used
        c = self._cursor
        ok = need > 0
        if total and c + total <= len(used) and not used[c:c + total].any():
            # the common case: one run after the cursor holds every request, in lane order
            starts = c + np.cumsum(need) - need
            self._take(starts[ok], need[ok])
            out[ok] = _U64(self.base) + starts[ok].astype(_U64) * _U64(GRANULE)
            self._cursor = c + total
            return out
        # first fit over the free runs, found once for the whole call
        runs = self._free_runs()
        starts, lengths = [], []
        for k in np.flatnonzero(ok):
            n = int(need[k])
            run = next((r for r in runs if r[1] >= n), None)
            if run is None:
                continue                        # NULL: no run is long enough
            out[k] = self.base + run[0] * GRANULE
            starts.append(run[0])
            lengths.append(n)
            run[0] += n
            run[1] -= n
        if starts:
            self._take(np.array(starts), np.array(lengths))
            self._cursor = starts[-1] + lengths[-1]
        return out

    def _take(self, starts: np.ndarray, lengths: np.ndarray) -> None:
        self._lengths[starts] = lengths
        self._used[np.repeat(starts - np.cumsum(lengths) + lengths, lengths) + np.arange(int(lengths.sum()))] = 1

    def _free_runs(self) -> list[list[int]]:
        """[first granule, length] of each run of free granules, in address order."""
        edges = np.diff(np.concatenate(([0], (self._used == 0).view(np.int8), [0])))
        return [[int(a), int(b - a)] for a, b in zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1))]

    def free(self, ptrs: np.ndarray) -> None:
        """Release the blocks at ``ptrs`` (NULL is ignored, as by C's free)."""
        ptrs = ptrs[ptrs != 0]
        if not len(ptrs):
            return
        if not self.reserved:
            self.reserve()
        off = ptrs.astype(np.int64) - self.base
        g = off // GRANULE
        bad = (off < 0) | (off % GRANULE != 0) | (g >= len(self._used))
        if not bad.any():
            bad = self._lengths[g] == 0
        if bad.any() or len(np.unique(g)) != len(g):
            p = int(ptrs[np.flatnonzero(bad)[0]]) if bad.any() else int(ptrs[0])
            raise EmuError(CUDA_ERROR_ILLEGAL_ADDRESS, f"free({p:#x}) of a pointer that device malloc did not "
                                                       "return or that was freed already")
        lengths = self._lengths[g].astype(np.int64)
        self._lengths[g] = 0
        self._used[np.repeat(g - np.cumsum(lengths) + lengths, lengths) + np.arange(int(lengths.sum()))] = 0


def heap_of(arena) -> DeviceHeap:
    """The heap of the device whose memory is ``arena``."""
    h = getattr(arena, "malloc_heap", None)
    if h is None:
        h = arena.malloc_heap = DeviceHeap(arena)
    return h


def _active(values, L, mask, n: int) -> tuple[np.ndarray, np.ndarray | None]:
    """(the values of the lanes that call, as an array over L; the bool selector or None for all)."""
    count = n if L is None else len(L)
    vals = np.broadcast_to(np.asarray(values, dtype=_U64), (count,))
    if mask is True:
        return vals, None
    sel = np.broadcast_to(np.asarray(mask, dtype=bool), (count,))
    return vals[sel], sel


def heap_malloc(X, sizes, L, mask):
    """malloc for the lanes ``L`` where ``mask``: their addresses (0 elsewhere and when out of room)."""
    vals, sel = _active(sizes, L, mask, X.N)
    got = heap_of(X.mem).malloc(vals)
    if sel is None:
        return got
    out = np.zeros(len(sel), _U64)
    out[sel] = got
    return out


def heap_free(X, ptrs, L, mask) -> None:
    vals, _ = _active(ptrs, L, mask, X.N)
    heap_of(X.mem).free(vals)


class HeapEmitters:
    """Code generation for the ``malloc``/``free`` system calls (mixin of the block code generator)."""

    def op_malloc(self, ins: Instr, idx: int) -> None:
        ops = ins.operands
        if len(ops) != 2:
            raise not_supported(f"malloc call form `{ins.text()}`")
        ret, size = ops
        self.at(idx)
        r = self.new_tmp()
        m = self.mask_expr()
        self.emit(f"{r} = heap_malloc(X, X.ld_local({self.local_arg(size)}, u64, 1, L, True)[0], L, {m})")
        self.emit(f"X.st_local({self.local_arg(ret)}, u64, ({r},), L, {m})")

    def op_free(self, ins: Instr, idx: int) -> None:
        self.at(idx)
        ptr = ins.operands[-1]
        self.emit(f"heap_free(X, X.ld_local({self.local_arg(ptr)}, u64, 1, L, True)[0], L, {self.mask_expr()})")


def discard_heap(arena) -> None:
    """Forget the heap of ``arena`` (its memory was freed by a device reset; limits are back to default)."""
    arena.malloc_heap = None


def heap_state(arena) -> dict[str, int] | None:
    """The heap of ``arena`` to hand to a worker process (None: none made yet, the default)."""
    h = getattr(arena, "malloc_heap", None)
    return None if h is None else h.state()


def adopt_heap(arena, state: dict[str, int] | None) -> None:
    """Make the heap of ``arena`` the one ``state`` describes (:func:`heap_state` of another process)."""
    if state is None:
        arena.malloc_heap = None
    else:
        heap_of(arena).adopt(state)
