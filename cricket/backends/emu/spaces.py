"""Kernel memory accesses of a running batch: global, shared (per CTA), local (per lane), generic."""
from __future__ import annotations

import numpy as np

from .errors import CUDA_ERROR_ILLEGAL_ADDRESS, CUDA_ERROR_MISALIGNED_ADDRESS, CUDA_ERROR_NOT_SUPPORTED, EmuError
from .memory import ITEM_SHIFT, LOCAL_WINDOW, SHARED_WINDOW, WINDOW_SHIFT, WIN_GLOBAL, WIN_LOCAL, WIN_SHARED

ndarray = np.ndarray
_U64 = np.uint64
# Generic addresses of kernel parameters (cvta.param, as for a __grid_constant__ parameter whose
# address is taken): read-only, below the shared window.
PARAM_WINDOW = 0x7C00_0000_0000
WIN_PARAM = PARAM_WINDOW >> WINDOW_SHIFT


class MemorySpaces:
    """Mixin of ``Batch``: loads and stores by state space, with bounds and alignment checks."""

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

    def _positions(self, L, mask) -> list[int]:
        """Positions in ``L`` of the lanes that act (a guard, or all): for per-lane operations."""
        n = self._lane_count(L)
        if mask is True or mask is None:
            return list(range(n))
        return np.flatnonzero(np.broadcast_to(np.asarray(mask, bool), (n,))).tolist()

    # ---- one load / store shape for every indexed space --------------------------------------
    # ``index(addr, size, es, L, sel)`` turns the guarded lanes' addresses into element indices of
    # ``view_of(dt)`` (checking bounds and alignment); ``size`` is the bytes each lane touches.
    def _ld_indexed(self, index, view_of, addr, dt, n, L, mask):
        addr, sel = self._apply_mask(addr, mask)
        if sel is False:
            return self._expand([0] * n, False, dt, self._lane_count(L))
        es = np.dtype(dt).itemsize
        idx = index(addr, es * n, es, L, sel)
        view = view_of(dt)
        vals = [view[idx]] if n == 1 else [view[idx + k] for k in range(n)]
        return self._expand(vals, sel, dt, 0)

    def _st_indexed(self, index, view_of, addr, dt, vals, L, mask):
        addr, sel = self._apply_mask(addr, mask)
        if sel is False:
            return
        es = np.dtype(dt).itemsize
        idx = index(addr, es * len(vals), es, L, sel)
        view = view_of(dt)
        for k, v in enumerate(vals):
            if type(v) is ndarray:
                if sel is not None:
                    v = v[sel]
                if type(idx) is not ndarray and v.ndim:
                    v = v[-1]   # many lanes store to one address: the last one wins
            view[idx + k if k else idx] = v

    @staticmethod
    def _cached_view(cache, buf, dt):
        v = cache.get(dt)
        if v is None:
            v = cache[dt] = buf.view(dt)
        return v

    # ---- global ------------------------------------------------------------------------------
    def _global_index(self, addr, size, es, L, sel):
        return self.mem.check(addr, size, es)

    def ld_global(self, addr, dt, n, L, mask=True):
        return self._ld_indexed(self._global_index, self.mem.view, addr, dt, n, L, mask)

    def st_global(self, addr, dt, vals, L, mask=True):
        self._st_indexed(self._global_index, self.mem.view, addr, dt, vals, L, mask)

    # ---- shared ------------------------------------------------------------------------------
    def _shared_index(self, addr, size, es, L, sel):
        if self.shared is None:
            raise EmuError(CUDA_ERROR_ILLEGAL_ADDRESS, "shared-memory access in a kernel launched without shared memory")
        a = addr
        shift = ITEM_SHIFT[es]
        if type(a) is ndarray:
            if a.size == 0:
                return a.astype(np.intp)
            if a.dtype.itemsize == 8:
                a = a.view(np.int64)
            hi = int(a.max())
            if es > 1 and int(np.bitwise_or.reduce(a)) & (es - 1):
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
        return self._cached_view(self._sviews, self.shared, dt)

    def ld_shared(self, addr, dt, n, L, mask=True):
        return self._ld_indexed(self._shared_index, self._sview, addr, dt, n, L, mask)

    def st_shared(self, addr, dt, vals, L, mask=True):
        self._st_indexed(self._shared_index, self._sview, addr, dt, vals, L, mask)

    # ---- local -------------------------------------------------------------------------------
    def _local_index(self, addr, size, es, L, sel):
        if self.local is None:
            raise EmuError(CUDA_ERROR_ILLEGAL_ADDRESS, "local-memory access in a kernel without local memory")
        a = addr
        if type(a) is ndarray:
            hi = int(a.max()) if a.size else 0
            if es > 1 and int(np.bitwise_or.reduce(a)) & (es - 1):
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
        return self._cached_view(self._lviews, self.local, dt)

    def ld_local(self, addr, dt, n, L, mask=True):
        return self._ld_indexed(self._local_index, self._lview, addr, dt, n, L, mask)

    def st_local(self, addr, dt, vals, L, mask=True):
        self._st_indexed(self._local_index, self._lview, addr, dt, vals, L, mask)

    # ---- kernel parameters through a register ------------------------------------------------
    def ld_kparam_dyn(self, addr, dt, n, L, mask=True):
        es = np.dtype(dt).itemsize
        if type(addr) is ndarray:
            if addr.size == 0 or addr.min() != addr.max():
                raise EmuError(CUDA_ERROR_NOT_SUPPORTED, "per-thread addresses into the kernel parameter space")
            addr = addr[0]
        return [self.par(int(addr) + k * es, dt) for k in range(n)]

    def _param_index(self, addr, size, es, L, sel):
        off = np.asarray(addr).astype(np.uint64) - _U64(PARAM_WINDOW)
        if off.size and (int(off.max()) + size > len(self.P)):
            raise EmuError(CUDA_ERROR_ILLEGAL_ADDRESS, f"kernel parameter read through a generic address beyond "
                                                       f"the {len(self.P)}-byte parameter buffer")
        if es > 1 and off.size and int(np.bitwise_or.reduce(off, axis=None)) & (es - 1):
            raise EmuError(CUDA_ERROR_MISALIGNED_ADDRESS, f"misaligned {es}-byte kernel parameter read")
        idx = (off >> _U64(ITEM_SHIFT[es])).astype(np.intp)
        return idx if idx.ndim else int(idx)

    def _pview(self, dt):
        raw = bytes(self.P)
        return np.frombuffer(raw + bytes(-len(raw) % 16), dtype=dt)

    def param_bytes(self, addr: int, size: int) -> bytes:
        """``size`` bytes at one generic or global address (a kernel parameter or device memory)."""
        if addr >> WINDOW_SHIFT == WIN_PARAM:
            i = self._param_index(np.uint64(addr), size, 1, None, None)
            return bytes(self.P[i:i + size])
        idx = int(self.mem.check(np.uint64(addr), 1, 1))
        self.mem.check(np.uint64(addr + size - 1), 1, 1)
        return self.mem.view(np.uint8)[idx:idx + size].tobytes()

    # ---- generic -----------------------------------------------------------------------------
    def _windows(self, addr):
        if type(addr) is ndarray:
            w = addr.astype(np.uint64) >> _U64(WINDOW_SHIFT)
            lo, hi = (int(w.min()), int(w.max())) if w.size else (WIN_GLOBAL, WIN_GLOBAL)
            if lo == hi:
                return lo, None
            return None, w
        return int(addr) >> WINDOW_SHIFT, None

    def _bad_generic(self, addr):
        a = addr if type(addr) is not ndarray else addr[0]
        return EmuError(CUDA_ERROR_ILLEGAL_ADDRESS, f"generic address {int(a):#x} is in no memory window "
                                                    "(a null or corrupted pointer)")

    def _generic_windows(self, addr, mask):
        """A generic access's addresses as uint64, the one window they all fall in (or None), and
        when they span several, (window, lane mask) for each window that guarded lanes use."""
        addr = addr.view(np.uint64) if type(addr) is ndarray and addr.dtype != np.uint64 else addr
        win, w = self._windows(addr)
        if win is not None:
            return addr, win, ()
        parts = []
        for wv in np.unique(w):
            m = w == wv
            if type(mask) is ndarray:
                m = m & mask
            elif not mask:
                continue
            parts.append((int(wv), m))
        return addr, None, parts

    def ld_generic(self, addr, dt, n, L, mask=True):
        addr, win, parts = self._generic_windows(addr, mask)
        if win is not None:
            return self._ld_window(win, addr, dt, n, L, mask)
        out = [np.zeros(len(addr), dt) for _ in range(n)]
        for wv, m in parts:
            vals = self._ld_window(wv, addr, dt, n, L, m)
            for k in range(n):
                out[k][m] = vals[k][m] if type(vals[k]) is ndarray else vals[k]
        return out

    def _ld_window(self, win, addr, dt, n, L, mask):
        if win == WIN_GLOBAL:
            return self.ld_global(addr, dt, n, L, mask)
        if win == WIN_SHARED:
            return self.ld_shared(addr - _U64(SHARED_WINDOW), dt, n, L, mask)
        if win == WIN_LOCAL:
            return self.ld_local(addr - _U64(LOCAL_WINDOW), dt, n, L, mask)
        if win == WIN_PARAM:
            return self._ld_indexed(self._param_index, self._pview, addr, dt, n, L, mask)
        a, sel = self._apply_mask(addr, mask)
        if sel is False:
            return self._expand([0] * n, False, dt, self._lane_count(L))
        raise self._bad_generic(a)

    def st_generic(self, addr, dt, vals, L, mask=True):
        addr, win, parts = self._generic_windows(addr, mask)
        if win is not None:
            return self._st_window(win, addr, dt, vals, L, mask)
        for wv, m in parts:
            self._st_window(wv, addr, dt, vals, L, m)

    def _st_window(self, win, addr, dt, vals, L, mask):
        if win == WIN_GLOBAL:
            return self.st_global(addr, dt, vals, L, mask)
        if win == WIN_SHARED:
            return self.st_shared(addr - _U64(SHARED_WINDOW), dt, vals, L, mask)
        if win == WIN_LOCAL:
            return self.st_local(addr - _U64(LOCAL_WINDOW), dt, vals, L, mask)
        a, sel = self._apply_mask(addr, mask)
        if sel is False:
            return
        raise self._bad_generic(a)

    def isspace(self, addr, space):
        w = (np.asarray(addr).astype(np.uint64) >> _U64(WINDOW_SHIFT)).astype(np.int64)
        want = {"global": WIN_GLOBAL, "const": WIN_GLOBAL, "shared": WIN_SHARED, "local": WIN_LOCAL,
                "param": WIN_PARAM}.get(space)
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

