"""Running a compiled kernel: CTA batching, the lowest-block-first scheduler, memory spaces, warp ops.

The threads of many CTAs form one vector of lanes (a *batch*); lane ``l`` is thread ``l % T`` of
the batch's CTA ``l // T``. Every lane has a program counter (a basic block); the scheduler keeps
a frontier ``{block: lanes}`` and always runs the lowest block next, so lanes that diverged meet again
where their paths join. Lanes at a barrier wait until no lane can run; exited lanes never hold a
barrier up.
"""
from __future__ import annotations

import logging
import re
import struct
import time

import numpy as np

from . import rt
from .codegen import CompiledKernel
from .errors import (CUDA_ERROR_ASSERT, CUDA_ERROR_ILLEGAL_ADDRESS, CUDA_ERROR_LAUNCH_FAILED,
                     CUDA_ERROR_LAUNCH_TIMEOUT, CUDA_ERROR_MISALIGNED_ADDRESS, CUDA_ERROR_NOT_SUPPORTED, EmuError)
from .memory import GLOBAL_BASE, LOCAL_WINDOW, SHARED_WINDOW, WINDOW_SHIFT, DeviceArena

log = logging.getLogger(__name__)
ndarray = np.ndarray
_U64 = np.uint64
_WIN_GLOBAL = GLOBAL_BASE >> WINDOW_SHIFT
_WIN_SHARED = SHARED_WINDOW >> WINDOW_SHIFT
_WIN_LOCAL = LOCAL_WINDOW >> WINDOW_SHIFT

_SHIFT = {1: 0, 2: 1, 4: 2, 8: 3, 16: 4}
LIVELOCK_REPEATS = 256          # runs of one block while others wait before they get a turn
DEFAULT_MAX_STEPS = 50_000_000  # block executions per batch before the launch is declared hung


class LaunchConfig:
    __slots__ = ("grid", "block", "dynamic_shared", "params", "max_lanes", "sink", "max_steps", "deadline")

    def __init__(self, grid, block, dynamic_shared, params, max_lanes, sink, max_steps=DEFAULT_MAX_STEPS,
                 timeout=None):
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
    gx, gy, gz = cfg.grid
    bx, by, bz = cfg.block
    T = bx * by * bz
    ncta = gx * gy * gz
    ir = kernel.ir
    shared_bytes = ir.shared_static
    if cfg.dynamic_shared:
        shared_bytes = -(-ir.shared_static // ir.dynamic_shared_align) * ir.dynamic_shared_align + cfg.dynamic_shared
    S = -(-shared_bytes // 16) * 16
    LS = ir.local_size
    per_batch = max(1, cfg.max_lanes // T)
    if LS:
        per_batch = max(1, min(per_batch, (256 << 20) // max(1, LS * T)))
    if S:
        per_batch = max(1, min(per_batch, (256 << 20) // S))
    per_batch = min(per_batch, ncta)
    pattern = _ThreadPattern(cfg.block, per_batch)
    params = np.frombuffer(bytes(cfg.params), dtype=np.uint8)
    stats = {"thread_instructions": 0, "block_steps": 0, "batches": 0, "lanes_per_batch": per_batch * T}
    with np.errstate(all="ignore"):
        for c0 in range(0, ncta, per_batch):
            nc = min(per_batch, ncta - c0)
            X = Batch(kernel, arena, global_addrs, params, cfg, pattern, c0, nc, S, LS, shared_bytes)
            X.run()
            stats["thread_instructions"] += X.thread_instrs
            stats["block_steps"] += X.steps
            stats["batches"] += 1
    return stats


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
        self.laneid = (self.lin % 32).astype(np.uint32)
        warps_per_cta = -(-T // 32)
        self.warps_per_cta = warps_per_cta
        self.warp = (self.cta * warps_per_cta + (self.lin // 32)).astype(np.intp)
        wl = np.full(warps_per_cta, 32, dtype=np.int64)
        if T % 32:
            wl[-1] = T % 32
        self.warp_len = np.tile(wl, per_batch)
        self.n = n


class Batch:
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
        self._setup_specials(pat, full, c0, nc)

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
                    t = pat.tid[k]
                    R[f"%tid.{axis}"] = np.tile(t, nc) if nc > 1 else t
            R[f"%ntid.{axis}"] = u32((bx, by, bz)[k])
            R[f"%nctaid.{axis}"] = u32((gx, gy, gz)[k])
        if want & {"ctaid.x", "ctaid.y", "ctaid.z", "smid"}:
            ids = np.arange(c0, c0 + nc, dtype=np.int64)
            comps = (ids % gx, (ids // gx) % gy, ids // (gx * gy))
            for k, axis in enumerate("xyz"):
                if nc == 1:
                    R[f"%ctaid.{axis}"] = u32(comps[k][0])
                elif (gx, gy, gz)[k] == 1:
                    R[f"%ctaid.{axis}"] = u32(0)
                else:
                    R[f"%ctaid.{axis}"] = np.repeat(comps[k].astype(u32), self.T)
        if "laneid" in want:
            R["%laneid"] = self.laneid
        if "warpid" in want:
            R["%warpid"] = (self._lin() // 32).astype(u32)
        R["%nwarpid"] = u32(32)
        R["%smid"] = u32(0) if nc == 1 else np.repeat((np.arange(c0, c0 + nc) % 8).astype(u32), self.T)
        R["%nsmid"] = u32(8)
        R["%gridid"] = u32(1)
        R["%warpsize"] = u32(32)
        R["%total_smem_size"] = u32(self.S)
        R["%dynamic_smem_size"] = u32(self.cfg.dynamic_shared)
        R["%aggr_smem_size"] = u32(self.S)
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

    def clock32(self):
        self._clock += 997
        return np.uint32(self._clock & 0xFFFFFFFF)

    def clock64(self):
        self._clock += 997
        return np.uint64(self._clock)

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

    # ---- memory: helpers ---------------------------------------------------------------------
    @staticmethod
    def _apply_mask(addr, mask):
        """Lanes that perform a guarded access: (addresses, selector or None)."""
        if mask is True or mask is None:
            return addr, None
        if type(mask) is not ndarray:
            return (addr, None) if mask else (None, False)
        if mask.all():
            return addr, None
        return (addr[mask] if type(addr) is ndarray else addr), mask

    @staticmethod
    def _expand(vals, sel, dt, n):
        if sel is None:
            return vals
        if sel is False:
            z = np.zeros(n, dt) if n else dt(0)
            return [z for _ in vals]
        out = []
        for v in vals:
            full = np.zeros(len(sel), dt)
            full[sel] = v
            out.append(full)
        return out

    def _lane_count(self, L):
        return self.N if L is None else len(L)

    # ---- global ------------------------------------------------------------------------------
    def ld_global(self, addr, dt, n, L, mask=True):
        addr, sel = self._apply_mask(addr, mask)
        if sel is False:
            return self._expand([0] * n, False, dt, self._lane_count(L))
        es = np.dtype(dt).itemsize
        idx = self.mem.check(addr, es * n, es)
        view = self.mem.view(dt)
        if n == 1:
            vals = [view[idx]]
        else:
            vals = [view[idx + k] for k in range(n)]
        return self._expand(vals, sel, dt, 0)

    def st_global(self, addr, dt, vals, L, mask=True):
        addr, sel = self._apply_mask(addr, mask)
        if sel is False:
            return
        es = np.dtype(dt).itemsize
        idx = self.mem.check(addr, es * len(vals), es)
        view = self.mem.view(dt)
        for k, v in enumerate(vals):
            if type(v) is ndarray:
                if sel is not None:
                    v = v[sel]
                if type(idx) is not ndarray and v.ndim:
                    v = v[-1]   # many lanes store to one address: the last one wins
            view[idx + k if k else idx] = v

    # ---- shared ------------------------------------------------------------------------------
    def _shared_index(self, addr, size, es, L, sel):
        if self.shared is None:
            raise EmuError(CUDA_ERROR_ILLEGAL_ADDRESS, "shared-memory access in a kernel launched without shared memory")
        a = addr
        shift = _SHIFT[es]
        if type(a) is ndarray:
            if a.size == 0:
                return a.astype(np.intp)
            if a.dtype.itemsize == 8:
                a = a.view(np.int64)
            hi = int(a.max())
            if es > 1 and (a & (es - 1)).any():
                raise EmuError(CUDA_ERROR_MISALIGNED_ADDRESS, f"misaligned {es}-byte shared-memory access")
            if hi + size > self.shared_limit or (a.dtype.kind == "i" and int(a.min()) < 0):
                raise EmuError(CUDA_ERROR_ILLEGAL_ADDRESS,
                               f"shared-memory access at offset {hi:#x} beyond the block's {self.shared_limit} bytes")
            rel = a >> shift
        else:
            hi = int(a)
            if es > 1 and hi % es:
                raise EmuError(CUDA_ERROR_MISALIGNED_ADDRESS, f"misaligned {es}-byte shared-memory access at {hi:#x}")
            if hi + size > self.shared_limit:
                raise EmuError(CUDA_ERROR_ILLEGAL_ADDRESS,
                               f"shared-memory access at offset {hi:#x} beyond the block's {self.shared_limit} bytes")
            rel = hi >> shift
        if self.nc == 1:
            return rel
        if L is None and sel is None:
            base = self._cta_base.get(es)
            if base is None:
                base = self._cta_base[es] = self.cta_of * (self.S >> shift)
        else:
            cta = self.cta_of if L is None else self.cta_of[L]
            if sel is not None:
                cta = cta[sel]
            base = cta * (self.S >> shift)
        return base + rel

    def _sview(self, dt):
        v = self._sviews.get(dt)
        if v is None:
            v = self._sviews[dt] = self.shared.view(dt)
        return v

    def ld_shared(self, addr, dt, n, L, mask=True):
        addr, sel = self._apply_mask(addr, mask)
        if sel is False:
            return self._expand([0] * n, False, dt, self._lane_count(L))
        es = np.dtype(dt).itemsize
        idx = self._shared_index(addr, es * n, es, L, sel)
        view = self._sview(dt)
        vals = [view[idx]] if n == 1 else [view[idx + k] for k in range(n)]
        return self._expand(vals, sel, dt, 0)

    def st_shared(self, addr, dt, vals, L, mask=True):
        addr, sel = self._apply_mask(addr, mask)
        if sel is False:
            return
        es = np.dtype(dt).itemsize
        idx = self._shared_index(addr, es * len(vals), es, L, sel)
        view = self._sview(dt)
        for k, v in enumerate(vals):
            if type(v) is ndarray:
                if sel is not None:
                    v = v[sel]
                if type(idx) is not ndarray and v.ndim:
                    v = v[-1]   # many lanes store to one address: the last one wins
            view[idx + k if k else idx] = v

    # ---- local -------------------------------------------------------------------------------
    def _local_index(self, addr, size, es, L, sel):
        if self.local is None:
            raise EmuError(CUDA_ERROR_ILLEGAL_ADDRESS, "local-memory access in a kernel without local memory")
        a = addr
        if type(a) is ndarray:
            hi = int(a.max()) if a.size else 0
            if es > 1 and (a & a.dtype.type(es - 1)).any():
                raise EmuError(CUDA_ERROR_MISALIGNED_ADDRESS, f"misaligned {es}-byte local-memory access")
        else:
            hi = int(a)
            if es > 1 and hi % es:
                raise EmuError(CUDA_ERROR_MISALIGNED_ADDRESS, f"misaligned {es}-byte local-memory access at {hi:#x}")
        if hi + size > self.LS:
            raise EmuError(CUDA_ERROR_ILLEGAL_ADDRESS,
                           f"local-memory access at offset {hi:#x} beyond the thread's {self.LS} bytes")
        lanes = np.arange(self.N, dtype=np.intp) if L is None else L
        if sel is not None:
            lanes = lanes[sel]
        rel = (a // es).astype(np.intp) if type(a) is ndarray else hi // es
        return lanes * (self.LS // es) + rel

    def _lview(self, dt):
        v = self._lviews.get(dt)
        if v is None:
            v = self._lviews[dt] = self.local.view(dt)
        return v

    def ld_local(self, addr, dt, n, L, mask=True):
        addr, sel = self._apply_mask(addr, mask)
        if sel is False:
            return self._expand([0] * n, False, dt, self._lane_count(L))
        es = np.dtype(dt).itemsize
        idx = self._local_index(addr, es * n, es, L, sel)
        view = self._lview(dt)
        vals = [view[idx]] if n == 1 else [view[idx + k] for k in range(n)]
        return self._expand(vals, sel, dt, 0)

    def st_local(self, addr, dt, vals, L, mask=True):
        addr, sel = self._apply_mask(addr, mask)
        if sel is False:
            return
        es = np.dtype(dt).itemsize
        idx = self._local_index(addr, es * len(vals), es, L, sel)
        view = self._lview(dt)
        for k, v in enumerate(vals):
            if type(v) is ndarray:
                if sel is not None:
                    v = v[sel]
                if type(idx) is not ndarray and v.ndim:
                    v = v[-1]   # many lanes store to one address: the last one wins
            view[idx + k if k else idx] = v

    # ---- kernel parameters through a register ------------------------------------------------
    def ld_kparam_dyn(self, addr, dt, n, L, mask=True):
        es = np.dtype(dt).itemsize
        if type(addr) is ndarray:
            if addr.size == 0 or addr.min() != addr.max():
                raise EmuError(CUDA_ERROR_NOT_SUPPORTED, "per-thread addresses into the kernel parameter space")
            addr = addr[0]
        return [self.par(int(addr) + k * es, dt) for k in range(n)]

    # ---- generic -----------------------------------------------------------------------------
    def _windows(self, addr):
        if type(addr) is ndarray:
            w = addr.astype(np.uint64) >> _U64(WINDOW_SHIFT)
            lo, hi = int(w.min()), int(w.max()) if w.size else (_WIN_GLOBAL, _WIN_GLOBAL)
            if lo == hi:
                return lo, None
            return None, w
        return int(addr) >> WINDOW_SHIFT, None

    def _bad_generic(self, addr):
        a = addr if type(addr) is not ndarray else addr[0]
        return EmuError(CUDA_ERROR_ILLEGAL_ADDRESS, f"generic address {int(a):#x} is in no memory window "
                                                    "(a null or corrupted pointer)")

    def ld_generic(self, addr, dt, n, L, mask=True):
        addr = addr.view(np.uint64) if type(addr) is ndarray and addr.dtype != np.uint64 else addr
        win, w = self._windows(addr)
        if win is not None:
            return self._ld_window(win, addr, dt, n, L, mask)
        out = [np.zeros(len(addr), dt) for _ in range(n)]
        for wv in np.unique(w):
            m = w == wv
            if type(mask) is ndarray:
                m = m & mask
            elif not mask:
                continue
            vals = self._ld_window(int(wv), addr, dt, n, L, m)
            for k in range(n):
                out[k][m] = vals[k][m] if type(vals[k]) is ndarray else vals[k]
        return out

    def _ld_window(self, win, addr, dt, n, L, mask):
        if win == _WIN_GLOBAL:
            return self.ld_global(addr, dt, n, L, mask)
        if win == _WIN_SHARED:
            return self.ld_shared(addr - _U64(SHARED_WINDOW), dt, n, L, mask)
        if win == _WIN_LOCAL:
            return self.ld_local(addr - _U64(LOCAL_WINDOW), dt, n, L, mask)
        a, sel = self._apply_mask(addr, mask)
        if sel is False:
            return self._expand([0] * n, False, dt, self._lane_count(L))
        raise self._bad_generic(a)

    def st_generic(self, addr, dt, vals, L, mask=True):
        addr = addr.view(np.uint64) if type(addr) is ndarray and addr.dtype != np.uint64 else addr
        win, w = self._windows(addr)
        if win is not None:
            return self._st_window(win, addr, dt, vals, L, mask)
        for wv in np.unique(w):
            m = w == wv
            if type(mask) is ndarray:
                m = m & mask
            elif not mask:
                continue
            self._st_window(int(wv), addr, dt, vals, L, m)

    def _st_window(self, win, addr, dt, vals, L, mask):
        if win == _WIN_GLOBAL:
            return self.st_global(addr, dt, vals, L, mask)
        if win == _WIN_SHARED:
            return self.st_shared(addr - _U64(SHARED_WINDOW), dt, vals, L, mask)
        if win == _WIN_LOCAL:
            return self.st_local(addr - _U64(LOCAL_WINDOW), dt, vals, L, mask)
        a, sel = self._apply_mask(addr, mask)
        if sel is False:
            return
        raise self._bad_generic(a)

    def isspace(self, addr, space):
        w = (np.asarray(addr).astype(np.uint64) >> _U64(WINDOW_SHIFT)).astype(np.int64)
        want = {"global": _WIN_GLOBAL, "const": _WIN_GLOBAL, "shared": _WIN_SHARED, "local": _WIN_LOCAL}.get(space)
        if want is None:
            r = np.zeros_like(w, dtype=bool)
        else:
            r = w == want
        return r if r.ndim else r[()]

    def cp_async(self, daddr, saddr, size, srcsize, L, mask):
        n = self._lane_count(L)
        for k in range(size):
            if isinstance(srcsize, (int, np.integer)) and k >= int(srcsize):
                v = np.uint8(0)
            else:
                v = self.ld_global(saddr + _U64(k), np.uint8, 1, L, mask)[0]
                if not isinstance(srcsize, (int, np.integer)):
                    v = np.where(k < srcsize, v, np.uint8(0))
            self.st_shared(daddr + daddr.dtype.type(k) if type(daddr) is ndarray else daddr + type(daddr)(k),
                           np.uint8, (v,), L, mask)
        del n

    # ---- atomics -----------------------------------------------------------------------------
    def atom(self, space, op, addr, dt, b, c, L, mask):
        n = self._lane_count(L)
        if space == "generic":
            addr = addr.view(np.uint64) if type(addr) is ndarray and addr.dtype != np.uint64 else addr
            win, w = self._windows(addr)
            if win is None:
                out = np.zeros(n, dt)
                for wv in np.unique(w):
                    m = w == wv
                    if type(mask) is ndarray:
                        m = m & mask
                    elif not mask:
                        continue
                    sp = {_WIN_GLOBAL: "global", _WIN_SHARED: "shared"}.get(int(wv))
                    a2 = addr if sp != "shared" else addr - _U64(SHARED_WINDOW)
                    if sp is None:
                        raise self._bad_generic(addr[m])
                    r = self.atom(sp, op, a2, dt, b, c, L, m)
                    out[m] = r[m] if type(r) is ndarray else r
                return out
            if win == _WIN_GLOBAL:
                space = "global"
            elif win == _WIN_SHARED:
                space, addr = "shared", addr - _U64(SHARED_WINDOW)
            else:
                a, sel = self._apply_mask(addr, mask)
                if sel is False:
                    return np.zeros(n, dt)
                raise EmuError(CUDA_ERROR_ILLEGAL_ADDRESS, f"atomic on a non-global, non-shared generic address")
        addr_m, sel = self._apply_mask(addr, mask)
        if sel is False:
            return np.zeros(n, dt)
        es = np.dtype(dt).itemsize
        if space == "global":
            idx = self.mem.check(addr_m, es, es)
            view = self.mem.view(dt)
        elif space == "shared":
            idx = self._shared_index(addr_m, es, es, L, sel)
            view = self._sview(dt)
        else:
            raise EmuError(CUDA_ERROR_NOT_SUPPORTED, f"atomics on .{space} memory")
        m = n if sel is None else int(np.count_nonzero(sel))
        idx = np.broadcast_to(np.asarray(idx, dtype=np.intp), (m,))
        bb = np.broadcast_to(np.asarray(b if sel is None or type(b) is not ndarray else b[sel], dtype=dt), (m,))
        cc = None
        if c is not None:
            cc = np.broadcast_to(np.asarray(c if sel is None or type(c) is not ndarray else c[sel], dtype=dt), (m,))
        old = atomic_apply(view, idx, op, bb, cc, np.dtype(dt))
        if sel is None:
            return old
        full = np.zeros(n, dt)
        full[sel] = old
        return full

    # ---- warp-level --------------------------------------------------------------------------
    def _lanes(self, L):
        return np.arange(self.N, dtype=np.intp) if L is None else L

    def _check_converged(self, L, member, what):
        if L is None:
            return
        act = np.zeros(self.N, dtype=bool)
        act[L] = True
        touched = np.zeros(self.nwarps, dtype=bool)
        touched[self.warp_of[L]] = True
        m = np.asarray(member).astype(np.uint64)
        if m.ndim:
            # per-lane masks: a lane counts as named when any lane of its warp names it
            bits = np.zeros(self.nwarps, dtype=np.uint64)
            np.bitwise_or.at(bits, self.warp_of[L], m)
            m = bits[self.warp_of]
        inmask = ((m >> self.laneid.astype(np.uint64)) & np.uint64(1)) != 0
        bad = touched[self.warp_of] & self.alive & ~act & inmask
        if bad.any():
            lane = int(np.flatnonzero(bad)[0])
            raise EmuError(CUDA_ERROR_NOT_SUPPORTED,
                           f"{what} reached by only part of warp {lane // 32 % max(1, -(-self.T // 32))} of block "
                           f"{self.c0 + lane // self.T} while the other lanes named in its mask are elsewhere; "
                           "the emulator needs warp-synchronous operations to be reached by the whole warp "
                           "together (independent thread scheduling is not emulated)")

    def shfl(self, mode, a, b, c, member, L):
        lanes = self._lanes(L)
        self._check_converged(L, member, f"shfl.sync.{mode}")
        lid = self.laneid[lanes].astype(np.int64)
        bval = np.asarray(b).astype(np.int64) & 31
        cval = np.asarray(c).astype(np.int64)
        clamp = cval & 31
        seg = (cval >> 8) & 31
        max_lane = (lid & seg) | (clamp & ~seg)
        min_lane = lid & seg
        if mode == "up":
            j = lid - bval
            pv = j >= max_lane
        elif mode == "down":
            j = lid + bval
            pv = j <= max_lane
        elif mode == "bfly":
            j = lid ^ bval
            pv = j <= max_lane
        else:
            j = min_lane | (bval & ~seg)
            pv = j <= max_lane
        j = np.where(pv, j, lid)
        wl = self.warp_len[self.warp_of[lanes]]
        j = np.where(j < wl, j, lid)
        src = lanes - lid + j
        if L is None:
            full = a
        else:
            full = np.zeros(self.N, np.uint32)
            full[L] = a
        if type(full) is not ndarray:
            d = np.full(len(lanes), full, np.uint32)
        else:
            d = full[src]
        return d, np.broadcast_to(pv, (len(lanes),)).copy()

    def vote(self, mode, p, member, L, mask):
        lanes = self._lanes(L)
        self._check_converged(L, member, f"vote.sync.{mode}")
        n = len(lanes)
        p = np.broadcast_to(np.asarray(p, dtype=bool), (n,))
        part = np.ones(n, bool) if mask is True or (type(mask) is not ndarray and mask) else \
            np.broadcast_to(np.asarray(mask, bool), (n,))
        mm = np.broadcast_to(np.asarray(member).astype(np.uint64), (n,))
        lid = self.laneid[lanes].astype(np.uint64)
        part = part & (((mm >> lid) & np.uint64(1)) != 0)
        w = self.warp_of[lanes]
        pp = p & part
        if mode == "ballot":
            bits = np.bincount(w, weights=(pp.astype(np.uint64) << lid).astype(np.float64), minlength=self.nwarps)
            return bits.astype(np.uint64).astype(np.uint32)[w]
        cnt = np.bincount(w, weights=pp, minlength=self.nwarps)
        tot = np.bincount(w, weights=part, minlength=self.nwarps)
        if mode == "any":
            return (cnt > 0)[w]
        if mode == "all":
            return (cnt == tot)[w]
        return ((cnt == tot) | (cnt == 0))[w]

    def match(self, mode, a, member, L):
        lanes = self._lanes(L)
        self._check_converged(L, member, f"match.{mode}.sync")
        n = len(lanes)
        a = np.broadcast_to(np.asarray(a), (n,))
        w = self.warp_of[lanes].astype(np.int64)
        lid = self.laneid[lanes].astype(np.uint64)
        keys = np.stack([w, a.astype(np.uint64).view(np.int64) if a.dtype.itemsize == 8 else a.astype(np.int64)])
        _, inv = np.unique(keys, axis=1, return_inverse=True)
        inv = inv.reshape(-1)
        groups = np.bincount(inv, weights=(np.uint64(1) << lid).astype(np.float64)).astype(np.uint64)
        gm = groups[inv].astype(np.uint32)
        warp_all = np.bincount(w, weights=(np.uint64(1) << lid).astype(np.float64),
                               minlength=self.nwarps).astype(np.uint64).astype(np.uint32)[w]
        if mode == "any":
            return gm, np.ones(n, bool)
        same = gm == warp_all
        return np.where(same, warp_all, np.uint32(0)), same

    def redux(self, op, a, member, L):
        lanes = self._lanes(L)
        self._check_converged(L, member, f"redux.sync.{op}")
        n = len(lanes)
        a = np.broadcast_to(np.asarray(a), (n,))
        dt = a.dtype
        w = self.warp_of[lanes]
        if op == "add":
            acc = np.zeros(self.nwarps, np.int64)
            np.add.at(acc, w, a.astype(np.int64))
            return acc.astype(dt)[w]
        if op in ("min", "max"):
            info = np.iinfo(dt)
            acc = np.full(self.nwarps, info.max if op == "min" else info.min, dt)
            (np.minimum if op == "min" else np.maximum).at(acc, w, a)
            return acc[w]
        ufn = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op]
        acc = np.full(self.nwarps, np.iinfo(dt).max if op == "and" and dt.kind == "u" else (-1 if op == "and" else 0), dt)
        ufn.at(acc, w, a)
        return acc[w]

    def warp_sync(self, member, L, mask):
        self._check_converged(L, member, "bar.warp.sync (__syncwarp)")

    # ---- traps, asserts, printf --------------------------------------------------------------
    def _active_lanes(self, L, mask):
        lanes = self._lanes(L)
        if mask is True:
            return lanes
        if type(mask) is not ndarray:
            return lanes if mask else lanes[:0]
        return lanes[np.broadcast_to(mask, (len(lanes),))]

    def _coords(self, lane: int) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
        bx, by, _ = self.cfg.block
        gx, gy, _ = self.cfg.grid
        t = lane % self.T
        c = self.c0 + lane // self.T
        return (c % gx, (c // gx) % gy, c // (gx * gy)), (t % bx, (t // bx) % by, t // (bx * by))

    def trap(self, L, mask):
        lanes = self._active_lanes(L, mask)
        if len(lanes):
            blk, thr = self._coords(int(lanes[0]))
            raise EmuError(CUDA_ERROR_LAUNCH_FAILED, f"trap instruction executed (__trap()) by block {list(blk)}, "
                                                     f"thread {list(thr)}")

    def _cstring(self, addr: int, limit: int = 1 << 16) -> str:
        if addr == 0:
            return "(null)"
        win = addr >> WINDOW_SHIFT
        if win != _WIN_GLOBAL:
            raise EmuError(CUDA_ERROR_ILLEGAL_ADDRESS, f"string argument at {addr:#x} is not in global memory")
        a = self.mem.allocation_of(addr)
        if a is None:
            raise EmuError(CUDA_ERROR_ILLEGAL_ADDRESS, f"string argument at {addr:#x} is outside every allocation")
        end = min(a[0] + a[1], addr + limit)
        raw = self.mem.read(addr, end - addr)
        return raw.split(b"\0", 1)[0].decode("utf-8", "replace")

    def _lane_value(self, v, k):
        return v[k] if type(v) is ndarray else v

    def assertfail(self, msg, file, line, func, charsize, L, mask):
        lanes = self._active_lanes(L, mask)
        if not len(lanes):
            return
        lines = []
        for k_, lane in enumerate(lanes[:32]):
            k = int(np.flatnonzero(self._lanes(L) == lane)[0]) if L is not None else int(lane)
            blk, thr = self._coords(int(lane))
            lines.append(f"{self._cstring(int(self._lane_value(file, k)))}:{int(self._lane_value(line, k))}: "
                         f"{self._cstring(int(self._lane_value(func, k)))}: block: [{blk[0]},{blk[1]},{blk[2]}], "
                         f"thread: [{thr[0]},{thr[1]},{thr[2]}] Assertion `"
                         f"{self._cstring(int(self._lane_value(msg, k)))}` failed.\n")
        for s in lines:
            self.sink(s)
        raise EmuError(CUDA_ERROR_ASSERT, f"device-side assert triggered: {lines[0].strip()}")

    def vprintf(self, fmt, args, L, mask):
        lanes_all = self._lanes(L)
        act = np.ones(len(lanes_all), bool) if mask is True else np.broadcast_to(np.asarray(mask, bool),
                                                                                 (len(lanes_all),))
        out = np.zeros(len(lanes_all), np.int32)
        cache: dict = {}
        for k in np.flatnonzero(act):
            lane = int(lanes_all[k])
            f_addr = int(self._lane_value(fmt, k))
            a_addr = int(self._lane_value(args, k))
            if f_addr not in cache:
                cache[f_addr] = parse_format(self._cstring(f_addr))
            pieces = cache[f_addr]
            text, nargs = self._format(pieces, a_addr, lane)
            self.sink(text)
            out[k] = nargs
        return out

    def _read_arg(self, addr: int, lane: int, size: int, off: int) -> bytes:
        win = addr >> WINDOW_SHIFT
        if win == _WIN_LOCAL:
            base = lane * self.LS + (addr - LOCAL_WINDOW) + off
            if (addr - LOCAL_WINDOW) + off + size > self.LS:
                raise EmuError(CUDA_ERROR_ILLEGAL_ADDRESS, "printf argument buffer beyond local memory")
            return self.local[base:base + size].tobytes()
        if win == _WIN_GLOBAL:
            return self.mem.read(addr + off, size)
        raise EmuError(CUDA_ERROR_ILLEGAL_ADDRESS, f"printf argument buffer at {addr:#x} is not readable")

    def _format(self, pieces, a_addr: int, lane: int) -> tuple[str, int]:
        out = []
        off = 0
        nargs = 0
        for piece in pieces:
            if isinstance(piece, str):
                out.append(piece)
                continue
            spec, conv, size = piece
            off = -(-off // size) * size
            raw = self._read_arg(a_addr, lane, size, off) if a_addr else bytes(size)
            off += size
            nargs += 1
            if conv in "diouxXc":
                v = int.from_bytes(raw, "little", signed=conv in "di")
                if conv in "ouxX" and size == 4:
                    v &= 0xFFFFFFFF
                if conv == "c":
                    out.append((spec.replace("c", "s")) % chr(v & 0xFF) if "%" in spec else chr(v & 0xFF))
                    continue
                if conv == "u":
                    out.append(spec.replace("u", "d") % v)
                else:
                    out.append(spec % v)
            elif conv in "eEfFgGaA":
                v = struct.unpack("<d", raw)[0]
                if conv in "aA":
                    out.append(float.hex(v))
                else:
                    out.append(spec % v)
            elif conv == "s":
                out.append(spec % self._cstring(int.from_bytes(raw, "little")))
            elif conv == "p":
                out.append(f"0x{int.from_bytes(raw, 'little'):x}")
        return "".join(out), nargs


_FMT = re.compile(r"%([-+ #0]*)(\*|\d+)?(?:\.(\*|\d+))?(hh|h|ll|l|L|z|j|t)?([diouxXeEfFgGaAcsp%])")


def parse_format(fmt: str) -> list:
    """Split a printf format into literal text and (python spec, conversion, argument size) items."""
    out: list = []
    pos = 0
    for m in _FMT.finditer(fmt):
        if m.start() > pos:
            out.append(fmt[pos:m.start()])
        flags, width, prec, length, conv = m.groups()
        pos = m.end()
        if conv == "%":
            out.append("%")
            continue
        if width == "*" or prec == "*":
            raise EmuError(CUDA_ERROR_NOT_SUPPORTED, "printf with '*' width or precision")
        spec = "%" + (flags or "") + (width or "") + (f".{prec}" if prec is not None else "")
        if conv in "diouxXc":
            size = 8 if length in ("l", "ll", "z", "j", "t", "L") else 4
        elif conv in "eEfFgGaA":
            size = 8
        else:
            size = 8
        out.append((spec + conv, conv, size))
    if pos < len(fmt):
        out.append(fmt[pos:])
    return out


# ---- atomics ----------------------------------------------------------------------------------
def atomic_apply(view: np.ndarray, idx: np.ndarray, op: str, b: np.ndarray, c, dt: np.dtype) -> np.ndarray:
    """Apply one atomic per lane in lane order; returns each lane's old value (deterministic)."""
    n = len(idx)
    if n == 0:
        return np.zeros(0, dt)
    order = np.argsort(idx, kind="stable")
    sidx = idx[order]
    sb = b[order]
    sc = c[order] if c is not None else None
    newseg = np.empty(n, bool)
    newseg[0] = True
    np.not_equal(sidx[1:], sidx[:-1], out=newseg[1:])
    starts = np.flatnonzero(newseg)
    counts = np.diff(np.append(starts, n))
    out_sorted = np.empty(n, dt)
    if op == "add" and dt.kind in "iu":
        cs = np.cumsum(sb, dtype=dt)
        excl = cs - sb
        seg_excl = np.repeat(excl[starts], counts)
        base = np.repeat(view[sidx[starts]], counts)
        out_sorted = (base + (excl - seg_excl)).astype(dt)
        last = starts + counts - 1
        view[sidx[last]] = (out_sorted[last] + sb[last]).astype(dt)
    elif op == "add" and dt.kind == "f" and counts.max() > 32 and len(starts) <= 4096:
        # exact lane-order float accumulation: a sequential cumsum per address
        for s, c in zip(starts.tolist(), counts.tolist()):
            a = sidx[s]
            pref = np.cumsum(np.concatenate(([view[a]], sb[s:s + c])), dtype=dt)
            out_sorted[s:s + c] = pref[:-1]
            view[a] = pref[-1]
    else:
        fn = _ATOMIC_FNS[op]
        maxc = int(counts.max())
        for r in range(maxc):
            pos = starts[counts > r] + r
            a = sidx[pos]
            old = view[a]
            view[a] = fn(old, sb[pos], sc[pos] if sc is not None else None, dt)
            out_sorted[pos] = old
    out = np.empty(n, dt)
    out[order] = out_sorted
    return out


def _inc(old, b, c, dt):
    return np.where(old >= b, dt.type(0), old + dt.type(1)).astype(dt)


def _dec(old, b, c, dt):
    return np.where((old == 0) | (old > b), b, old - dt.type(1)).astype(dt)


_ATOMIC_FNS = {
    "add": lambda o, b, c, dt: (o + b).astype(dt),
    "min": lambda o, b, c, dt: (rt.fmin(o, b) if dt.kind == "f" else np.minimum(o, b)).astype(dt),
    "max": lambda o, b, c, dt: (rt.fmax(o, b) if dt.kind == "f" else np.maximum(o, b)).astype(dt),
    "and": lambda o, b, c, dt: (o & b).astype(dt),
    "or": lambda o, b, c, dt: (o | b).astype(dt),
    "xor": lambda o, b, c, dt: (o ^ b).astype(dt),
    "exch": lambda o, b, c, dt: np.asarray(b, dt),
    "cas": lambda o, b, c, dt: np.where(o == b, c, o).astype(dt),
    "inc": _inc,
    "dec": _dec,
}
