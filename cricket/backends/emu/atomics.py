"""Atomic read-modify-write in lane order (deterministic), on global and shared memory."""
from __future__ import annotations

import numpy as np

from . import rt

from .errors import CUDA_ERROR_ILLEGAL_ADDRESS, CUDA_ERROR_NOT_SUPPORTED, EmuError
from .memory import SHARED_WINDOW, WIN_GLOBAL, WIN_SHARED

ndarray = np.ndarray
_U64 = np.uint64


class AtomicOps:
    """Mixin of ``Batch``: the ``atom``/``red`` instructions."""

    # ---- atomics -----------------------------------------------------------------------------
    def atom(self, space, op, addr, dt, b, c, L, mask):
        n = self._lane_count(L)
        if space == "generic":
            addr, win, parts = self._generic_windows(addr, mask)
            if win is None:
                out = np.zeros(n, dt)
                for wv, m in parts:
                    sp = {WIN_GLOBAL: "global", WIN_SHARED: "shared"}.get(wv)
                    a2 = addr if sp != "shared" else addr - _U64(SHARED_WINDOW)
                    if sp is None:
                        raise self._bad_generic(addr[m])
                    r = self.atom(sp, op, a2, dt, b, c, L, m)
                    out[m] = r[m] if type(r) is ndarray else r
                return out
            if win == WIN_GLOBAL:
                space = "global"
            elif win == WIN_SHARED:
                space, addr = "shared", addr - _U64(SHARED_WINDOW)
            else:
                a, sel = self._apply_mask(addr, mask)
                if sel is False:
                    return np.zeros(n, dt)
                raise EmuError(CUDA_ERROR_ILLEGAL_ADDRESS, "atomic on a non-global, non-shared generic address")
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

