"""Warp-level operations per warp of 32: shfl, vote, match, redux, and the convergence check."""
from __future__ import annotations

import numpy as np

from .errors import CUDA_ERROR_NOT_SUPPORTED, EmuError

ndarray = np.ndarray


class WarpOps:
    """Mixin of ``Batch``: operations over the lanes of each warp."""

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

