"""elect.sync (sm_90): one leader among the warp's lanes named in a member mask.

The PTX ISA asks for a deterministic choice among the active lanes of ``membermask``; the emulator
elects the lowest-numbered one. Every participating lane gets the leader's lane id in ``d`` and
``p`` true on the leader only.
"""
from __future__ import annotations

import numpy as np

from .ptx.ast import Instr, Pair, Sink


def elect(X, member, L, mask):
    """(leader lane id, is-leader) per lane of ``L`` for the lanes where ``mask`` holds."""
    lanes = X._lanes(L)
    X._check_converged(L, member, "elect.sync")
    lid = X.laneid[lanes].astype(np.int64)
    bits = np.broadcast_to(np.asarray(member).astype(np.int64), lid.shape)
    taking = ((bits >> lid) & 1) == 1
    if mask is not True:
        taking &= np.broadcast_to(np.asarray(mask, dtype=bool), lid.shape)
    warps = X.warp_of[lanes]
    best = np.full(X.nwarps, 32, np.int64)
    np.minimum.at(best, warps, np.where(taking, lid, 32))
    leader = best[warps]
    return leader.astype(np.uint32), taking & (lid == leader)


class ElectEmitters:
    """Code generation for elect.sync (mixin of the block code generator)."""

    def op_elect(self, ins: Instr, idx: int) -> None:
        dest = ins.operands[0]
        d, p = (dest.first, dest.second) if isinstance(dest, Pair) else (dest, Sink())
        member = self.src(ins.operands[1], "u32")
        self.at(idx)
        r, q = self.new_tmp(), self.new_tmp()
        self.emit(f"{r}, {q} = elect(X, {member}, L, {self.mask_expr()})")
        self.assign(d, r, "u32")
        self.assign(p, q, "b_")
