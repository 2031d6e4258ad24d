"""Running a compiled kernel: CTA batching, the lowest-block-first scheduler, memory spaces, warp ops.

The threads of many CTAs form one vector of lanes (a *batch*); lane ``l`` is thread ``l % T`` of
the batch's CTA ``l // T``. Every lane has a program counter (a basic block); the scheduler keeps
a frontier ``{block: lanes}`` and always runs the lowest block next, so lanes that diverged meet again
where their paths join. Lanes at a barrier wait until no lane can run; exited lanes never hold a
barrier up.
"""
from __future__ import annotations

import logging
import time
import weakref

import numpy as np

from ...cudafacts import device_attributes as A
from ...cudafacts.occupancy import shared_granularity
from .. import reference_device
from . import rt
from .codegen import CompiledKernel
from .errors import (CUDA_ERROR_ILLEGAL_ADDRESS, CUDA_ERROR_LAUNCH_FAILED, CUDA_ERROR_LAUNCH_TIMEOUT,
                     CUDA_ERROR_NOT_SUPPORTED, EmuError)
from .atomics import AtomicOps
from .memory import DeviceArena
from .spaces import MemorySpaces
from .syscalls import DeviceCalls
from .warp import WarpOps

log = logging.getLogger(__name__)
ndarray = np.ndarray
LIVELOCK_REPEATS = 256          # runs of one block while others wait before they get a turn
DEFAULT_MAX_STEPS = 50_000_000  # block executions per batch before the launch is declared hung
WARP_SIZE = 32
SM_COUNT = 8                    # CTAs are spread over this many emulated SMs (%smid, %nsmid)
MAX_WARPS_PER_SM = 32           # %nwarpid: an sm_75 SM holds 1024 threads
# %total_smem_size counts shared memory in the allocation units of the emulated architecture
SHARED_UNIT = shared_granularity(reference_device.ATTRIBUTES[A.COMPUTE_CAPABILITY_MAJOR])


class LaunchConfig:
    __slots__ = ("grid", "block", "dynamic_shared", "params", "max_lanes", "sink", "max_steps", "deadline",
                 "grid_id", "ctas", "local_limit", "grid_workspace")

    def __init__(self, grid, block, dynamic_shared, params, max_lanes, sink, max_steps=DEFAULT_MAX_STEPS,
                 timeout=None, grid_id: int = 1, ctas: tuple[int, int] | None = None,
                 local_limit: int | None = None, grid_workspace: int = 0):
        self.grid_id = grid_id          # %gridid: the launch's number on its device
        self.grid_workspace = grid_workspace   # a cooperative launch's grid barrier (emu/cooperative.py)
        self.ctas = ctas                # run only CTAs [first, end) of the grid (None: all)
        # bytes of local memory one batch's call stacks may grow to (None: the call stack's own
        # LOCAL_BUDGET); what the session's memory budget granted the launch
        self.local_limit = local_limit
        self.grid = grid
        self.block = block
        self.dynamic_shared = dynamic_shared
        self.params = params
        self.max_lanes = max_lanes
        self.sink = sink
        self.max_steps = max_steps
        self.deadline = None if timeout is None else time.monotonic() + timeout


def run_kernel(kernel: CompiledKernel, arena: DeviceArena, global_addrs: np.ndarray, cfg: LaunchConfig) -> dict:
    """Execute every CTA of the grid, batch after batch; returns execution counts."""
    ir = kernel.ir
    shared_bytes = _shared_bytes(ir, cfg.dynamic_shared)
    S = -(-shared_bytes // 16) * 16
    LS = ir.local_size
    first, end = cfg.ctas or (0, grid_ctas(cfg.grid))
    per_batch = min(ctas_per_batch(ir, cfg), end - first)
    T = block_threads(cfg.block)
    pattern = _pattern(cfg.block, per_batch)
    params = np.frombuffer(bytes(cfg.params), dtype=np.uint8)
    stats = {"thread_instructions": 0, "block_steps": 0, "batches": 0, "lanes_per_batch": per_batch * T}
    with np.errstate(all="ignore"):
        for c0 in range(first, end, per_batch):
            nc = min(per_batch, end - c0)
            X = Batch(kernel, arena, global_addrs, params, cfg, pattern, c0, nc, S, LS, shared_bytes)
            X.run()
            stats["thread_instructions"] += X.thread_instrs
            stats["block_steps"] += X.steps
            stats["batches"] += 1
    return stats


def grid_ctas(grid) -> int:
    return grid[0] * grid[1] * grid[2]


def block_threads(block) -> int:
    return block[0] * block[1] * block[2]


def _shared_bytes(ir, dynamic_shared: int) -> int:
    if not dynamic_shared:
        return ir.shared_static
    return -(-ir.shared_static // ir.dynamic_shared_align) * ir.dynamic_shared_align + dynamic_shared


def ctas_per_batch(ir, cfg: LaunchConfig) -> int:
    """How many CTAs run as one vector: up to ``max_lanes`` threads, and 256 MiB of shared or local
    memory."""
    T = block_threads(cfg.block)
    S = -(-_shared_bytes(ir, cfg.dynamic_shared) // 16) * 16
    per_batch = max(1, cfg.max_lanes // T)
    if ir.local_size:
        per_batch = max(1, min(per_batch, (256 << 20) // max(1, ir.local_size * T)))
    if S:
        per_batch = max(1, min(per_batch, (256 << 20) // S))
    return per_batch


def batch_local_bytes(ir, cfg: LaunchConfig) -> int:
    """Local memory of one batch as it starts (every lane's frame of ``ir.local_size`` bytes); a
    kernel with real calls (``ir.calls``) may grow it while it runs."""
    if not ir.local_size:
        return 0
    return min(ctas_per_batch(ir, cfg), grid_ctas(cfg.grid)) * block_threads(cfg.block) * ir.local_size


_PATTERNS: dict[tuple, "_ThreadPattern"] = {}
_SPECIALS: "weakref.WeakKeyDictionary[CompiledKernel, dict]" = weakref.WeakKeyDictionary()
CACHED_PATTERN_LANES = 4096     # small launches keep their thread pattern: most of an empty launch's cost
MAX_CACHED_PATTERNS = 64


def _pattern(block, per_batch: int) -> "_ThreadPattern":
    """The thread pattern of a batch shape; those of small batches are made once per process."""
    if per_batch * block_threads(block) > CACHED_PATTERN_LANES:
        return _ThreadPattern(block, per_batch)
    key = (tuple(block), per_batch)
    pattern = _PATTERNS.get(key)
    if pattern is None:
        if len(_PATTERNS) >= MAX_CACHED_PATTERNS:
            _PATTERNS.clear()
        pattern = _PATTERNS[key] = _ThreadPattern(block, per_batch)
    return pattern


class _ThreadPattern:
    """Per-lane thread coordinates of a full batch, computed once per launch."""

    def __init__(self, block, per_batch: int) -> None:
        bx, by, bz = block
        T = bx * by * bz
        t = np.arange(T, dtype=np.uint32)
        self.T = T
        self.tid = (t % bx, (t // bx) % by, t // (bx * by))
        self.uniform = (bx == 1, by == 1, bz == 1)
        n = per_batch * T
        self.lin = np.tile(t, per_batch) if per_batch > 1 else t
        self.cta = np.repeat(np.arange(per_batch, dtype=np.intp), T)
        self.laneid = (self.lin % WARP_SIZE).astype(np.uint32)
        warps_per_cta = -(-T // WARP_SIZE)
        self.warps_per_cta = warps_per_cta
        self.warp = (self.cta * warps_per_cta + (self.lin // WARP_SIZE)).astype(np.intp)
        wl = np.full(warps_per_cta, WARP_SIZE, dtype=np.int64)
        if T % WARP_SIZE:
            wl[-1] = T % WARP_SIZE
        self.warp_len = np.tile(wl, per_batch)
        self.n = n
        self._tiled: dict = {}

    def tiled_tid(self, axis: int, nc: int) -> np.ndarray:
        """%tid.<axis> over ``nc`` CTAs (shared by every batch of that size; never written)."""
        key = (axis, nc)
        a = self._tiled.get(key)
        if a is None:
            t = self.tid[axis]
            a = self._tiled[key] = np.tile(t, nc) if nc > 1 else t
        return a


class Batch(MemorySpaces, AtomicOps, WarpOps, DeviceCalls):
    """The state of one batch of CTAs while it runs; the generated block code calls its methods."""

    def __init__(self, kernel: CompiledKernel, arena: DeviceArena, G: np.ndarray, params: np.ndarray,
                 cfg: LaunchConfig, pat: _ThreadPattern, c0: int, nc: int, S: int, LS: int, shared_bytes: int):
        self.kernel = kernel
        self.mem = arena
        self.G = G
        self.P = params
        self.cfg = cfg
        self.T = T = pat.T
        self.nc = nc
        self.c0 = c0
        self.N = N = nc * T
        self.S = S
        self.shared_limit = shared_bytes
        self.LS = LS
        self.R: dict = {}
        self.O: set = set()
        self.at = -1
        self._pcache: dict = {}
        self._clock = 0
        self.sink = cfg.sink
        self.shared = np.zeros(nc * S, dtype=np.uint8) if S else None
        self.local = np.zeros(N * LS, dtype=np.uint8) if LS else None
        self._sviews: dict = {}
        self._cta_base: dict = {}
        self._lviews: dict = {}
        full = nc == pat.n // T
        self.cta_of = pat.cta if full else pat.cta[:N]
        self.laneid = pat.laneid if full else pat.laneid[:N]
        self.warp_of = pat.warp if full else pat.warp[:N]
        self.nwarps = nc * pat.warps_per_cta
        self.warp_len = pat.warp_len if full else pat.warp_len[: self.nwarps]
        self.alive = np.ones(N, dtype=bool)
        self.thread_instrs = 0
        self.steps = 0
        if N > CACHED_PATTERN_LANES:
            self._setup_specials(pat, full, c0, nc)
            return
        # A small batch's special registers are made once per shape (only %gridid differs).
        cfg = self.cfg
        known = _SPECIALS.setdefault(kernel, {})
        key = (cfg.grid, cfg.block, cfg.dynamic_shared, shared_bytes, c0, nc, pat.n)
        specials = known.get(key)
        if specials is None:
            self._setup_specials(pat, full, c0, nc)
            if len(known) >= MAX_CACHED_PATTERNS:
                known.clear()
            known[key] = dict(self.R)
        else:
            self.R.update(specials)
            self.R["%gridid"] = np.uint64(cfg.grid_id)

    # ---- special registers -------------------------------------------------------------------
    def _setup_specials(self, pat: _ThreadPattern, full: bool, c0: int, nc: int) -> None:
        R = self.R
        u32 = np.uint32
        bx, by, bz = self.cfg.block
        gx, gy, gz = self.cfg.grid
        want = self.kernel.specials
        for k, axis in enumerate("xyz"):
            if f"tid.{axis}" in want:
                if pat.uniform[k]:
                    R[f"%tid.{axis}"] = u32(0)
                else:
                    R[f"%tid.{axis}"] = pat.tiled_tid(k, nc)
            R[f"%ntid.{axis}"] = u32((bx, by, bz)[k])
            R[f"%nctaid.{axis}"] = u32((gx, gy, gz)[k])
            # no cluster launches: each CTA is a cluster of its own (1x1x1)
            R[f"%nclusterid.{axis}"] = R[f"%nctaid.{axis}"]
            R[f"%cluster_ctaid.{axis}"] = u32(0)
            R[f"%cluster_nctaid.{axis}"] = u32(1)
        if want & {"ctaid.x", "ctaid.y", "ctaid.z", "clusterid.x", "clusterid.y", "clusterid.z"}:
            ids = np.arange(c0, c0 + nc, dtype=np.int64)
            comps = (ids % gx, (ids // gx) % gy, ids // (gx * gy))
            for k, axis in enumerate("xyz"):
                if nc == 1:
                    R[f"%ctaid.{axis}"] = u32(comps[k][0])
                elif (gx, gy, gz)[k] == 1:
                    R[f"%ctaid.{axis}"] = u32(0)
                else:
                    R[f"%ctaid.{axis}"] = np.repeat(comps[k].astype(u32), self.T)
                R[f"%clusterid.{axis}"] = R[f"%ctaid.{axis}"]
        R["%is_explicit_cluster"] = u32(0)
        R["%cluster_ctarank"] = u32(0)
        R["%cluster_nctarank"] = u32(1)
        if "laneid" in want:
            R["%laneid"] = self.laneid
        if "warpid" in want:
            R["%warpid"] = (self._lin() // WARP_SIZE).astype(u32)
        R["%nwarpid"] = u32(MAX_WARPS_PER_SM)
        if "smid" in want:
            sm = (np.arange(c0, c0 + nc) % SM_COUNT).astype(u32)
            R["%smid"] = sm[0] if nc == 1 else np.repeat(sm, self.T)
        R["%nsmid"] = u32(SM_COUNT)
        R["%gridid"] = np.uint64(self.cfg.grid_id)
        R["%WARP_SZ"] = u32(WARP_SIZE)
        R["%current_graph_exec"] = np.uint64(0)     # no device graphs
        # %envreg1:%envreg2: where grid.sync() finds its barrier; 0 outside a cooperative launch
        R["%envreg1"] = u32(self.cfg.grid_workspace >> 32)
        R["%envreg2"] = u32(self.cfg.grid_workspace & 0xFFFFFFFF)
        # shared memory: the emulated device reserves none for system software
        total = -(-self.shared_limit // SHARED_UNIT) * SHARED_UNIT
        R["%total_smem_size"] = u32(total)
        R["%aggr_smem_size"] = u32(total)
        R["%dynamic_smem_size"] = u32(self.cfg.dynamic_shared)
        for name in ("begin", "end", "cap", "0", "1"):
            R[f"%reserved_smem_offset_{name}"] = u32(0)
        for name in ("eq", "lt", "le", "gt", "ge"):
            if f"lanemask_{name}" in want:
                lane = self.laneid.astype(np.uint64)
                one = np.uint64(1)
                m = {"eq": one << lane, "lt": (one << lane) - one, "le": ((one << lane) << one) - one}.get(name)
                if m is None:
                    le = ((one << lane) << one) - one
                    m = ~((one << lane) - one) if name == "ge" else ~le
                R[f"%lanemask_{name}"] = (m & np.uint64(0xFFFFFFFF)).astype(u32)
        for name in want:
            if "%" + name not in R:
                raise EmuError(CUDA_ERROR_NOT_SUPPORTED, f"special register %{name} is not supported by the emu backend")

    def _lin(self):
        return np.tile(np.arange(self.T, dtype=np.uint32), self.nc)

    # %clock64 counts a fixed 997 "cycles" per read, so that differences are positive; %clock and
    # %clock_hi are its low and high halves, %globaltimer is the host's clock in nanoseconds.
    def clock64(self):
        self._clock += 997
        return np.uint64(self._clock)

    def clock32(self):
        return np.uint32(int(self.clock64()) & 0xFFFFFFFF)

    def clock_hi(self):
        return np.uint32(int(self.clock64()) >> 32)

    def globaltimer(self):
        return np.uint64(time.time_ns())

    def globaltimer_lo(self):
        return np.uint32(time.time_ns() & 0xFFFFFFFF)

    def globaltimer_hi(self):
        return np.uint32(time.time_ns() >> 32)

    def par(self, off: int, dt):
        key = (off, dt)
        v = self._pcache.get(key)
        if v is None:
            size = np.dtype(dt).itemsize
            if off + size > len(self.P):
                raise EmuError(CUDA_ERROR_ILLEGAL_ADDRESS, f"kernel parameter read at offset {off} beyond the "
                                                           f"{len(self.P)}-byte parameter buffer")
            v = np.frombuffer(self.P, dtype=dt, count=1, offset=off)[0]
            self._pcache[key] = v
        return v

    # ---- scheduler ---------------------------------------------------------------------------
    def run(self) -> None:
        k = self.kernel
        fns = k.fns
        N = self.N
        front: dict = {0: [None]}     # block -> list of lane index arrays (None: every lane)
        parked: list = []
        steps = 0
        max_steps = self.cfg.max_steps
        deadline = self.cfg.deadline
        last = -1
        repeat = 0
        warp_blocks = k.warp_blocks
        sizes = k.block_sizes
        tin = 0

        def add(t, L):
            if t < 0:
                if L is None:
                    self.alive[:] = False
                else:
                    self.alive[L] = False
                return
            parts = front.get(t)
            if parts is None:
                front[t] = [L]
            else:
                parts.append(L)

        while True:
            if not front:
                if not parked:
                    self.steps, self.thread_instrs = steps, tin
                    break
                self._release(parked, add)
                parked = []
                continue
            b = min(front)
            if b == last and (len(front) > 1):
                repeat += 1
                if repeat > LIVELOCK_REPEATS:
                    others = sorted(x for x in front if x != b and not warp_blocks[x])
                    if others:
                        b = others[0]
                    repeat = 0
            else:
                repeat = 0
            last = b
            parts = front.pop(b)
            if len(parts) == 1:
                L = parts[0]
            elif sum(len(x) for x in parts) == N:
                L = None                      # disjoint parts covering the batch: everyone is here
            else:
                L = np.concatenate(parts)
                L.sort(kind="stable")         # merging sorted runs is linear

            steps += 1
            tin += sizes[b] * (N if L is None else len(L))
            if steps > max_steps or (deadline is not None and not steps & 1023 and time.monotonic() > deadline):
                self.steps, self.thread_instrs = steps, tin
                raise EmuError(CUDA_ERROR_LAUNCH_TIMEOUT,
                               f"kernel ran {steps} block steps without finishing (an endless loop, or a "
                               "spin-wait the emulator cannot resolve); the step or time limit of the emu "
                               "device ended it", kernel=k.name)
            self.at = -1 - b
            try:
                res = fns[b](self, L)
            except EmuError as e:
                self._locate(e, b)
                raise
            except MemoryError:
                raise
            except Exception as e:  # an emulator bug must fail the launch, never the process
                err = EmuError(CUDA_ERROR_LAUNCH_FAILED, f"internal emulator error ({type(e).__name__}: {e}); "
                                                         "please report this kernel's PTX")
                self._locate(err, b)
                log.debug("internal error in block %d of %s", b, k.name, exc_info=True)
                raise err from e
            if type(res) is int:
                add(res, L)
                continue
            if type(res[0]) is str:
                parked.append((res[1], L, res[2]))
                continue
            p, t, f = res
            if type(p) is ndarray:
                if p.all():
                    add(t, L)
                elif not p.any():
                    add(f, L)
                else:
                    if L is None:
                        Lt = np.flatnonzero(p)
                        Lf = np.flatnonzero(~p)
                    else:
                        Lt = L[p]
                        Lf = L[~p]
                    add(t, Lt)
                    add(f, Lf)
            else:
                add(t if p else f, L)

    def _locate(self, e: EmuError, block: int) -> None:
        k = self.kernel
        ins = None
        if self.at >= 0:
            ins = k.instrs[self.at]
        else:
            blk = k.ir.blocks[-1 - self.at] if -1 - self.at < len(k.ir.blocks) else None
            if blk is not None and blk.instrs:
                ins = blk.instrs[0]
        text, src = k.ir.describe(ins)
        e.locate(k.name, text, src)

    def _release(self, parked: list, add) -> None:
        reds: dict = {}
        for nxt, L, red in parked:
            if red is not None:
                p, op, reg = red
                reds.setdefault((reg, op), []).append((L, p))
        for (reg, op), items in reds.items():
            lanes = np.concatenate([np.arange(self.N) if L is None else L for L, _ in items])
            vals = np.concatenate([np.broadcast_to(np.asarray(p, bool), (self.N if L is None else len(L),))
                                   for L, p in items])
            cta = self.cta_of[lanes]
            cnt = np.bincount(cta, weights=vals, minlength=self.nc)
            arrived = np.bincount(cta, minlength=self.nc)
            if op == "popc":
                res = cnt[cta].astype(np.uint32)
            elif op == "and":
                res = (cnt == arrived)[cta]
            else:
                res = (cnt > 0)[cta]
            if reg is not None:
                dt = self.kernel.reg_dtypes[reg]
                rt.put(self, reg, lanes, res.astype(dt), dt)
        for nxt, L, red in parked:
            add(nxt, L)
