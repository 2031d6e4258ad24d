"""Warp-level matrix fragments: which element of a matrix each lane's registers hold.

A fragment is a few registers per lane, spread over the 32 lanes of a warp. A ``Fragment`` maps
(lane, element) to (row, column) of the whole matrix and says how elements pack into registers.

* ``mma.sync`` fragments follow the PTX ISA's tables ("Matrix Fragments for mma.mMnNkK"), with
  ``g = %laneid >> 2`` (groupID) and ``t = %laneid % 4`` (threadID_in_group).
* ``wmma`` fragments: the PTX ISA leaves their distribution over the lanes unspecified, and a
  program can only rely on all fragments of one kind sharing one layout (so that element-wise
  loops over ``frag.x[i]`` work). The emulator uses a plain one: lane ``l`` holds elements
  ``l*U .. l*U+U-1`` of the row-major matrix, ``U = rows*cols/32`` (sub-byte types: of the matrix
  in its memory order). Where the ISA gives a
  fragment more registers than that (``.f16`` multiplicands always have eight ``.f16x2``
  registers), the extra elements repeat the first ``U``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

WARP = 32
_LANE = np.arange(WARP)[:, None]
_G = _LANE >> 2
_T = _LANE & 3

# Bits of each element type of a fragment.
ELEMENT_BITS = {"f16": 16, "bf16": 16, "tf32": 32, "f32": 32, "f64": 64, "s8": 8, "u8": 8, "s32": 32, "b16": 16,
                "s4": 4, "u4": 4, "e4m3": 8, "e5m2": 8, "b1": 1}


@dataclass(frozen=True)
class Fragment:
    """One operand of a warp matrix instruction: shape, element type, and the per-lane layout."""
    rows: int
    cols: int
    etype: str
    row: np.ndarray          # (32, E): matrix row of each lane's element
    col: np.ndarray          # (32, E): matrix column
    nregs: int

    @property
    def elements(self) -> int:
        return self.row.shape[1]

    @property
    def ebits(self) -> int:
        return ELEMENT_BITS[self.etype]

    @property
    def ebytes(self) -> int:
        return max(1, self.ebits // 8)

    @property
    def reg_bytes(self) -> int:
        return 8 if self.etype == "f64" else 4


def _per_register(etype: str) -> int:
    return 1 if etype == "f64" else 32 // ELEMENT_BITS[etype]


def _frag(rows: int, cols: int, etype: str, row, col) -> Fragment:
    row = np.broadcast_to(np.asarray(row), np.broadcast(row, col).shape).astype(np.intp)
    col = np.broadcast_to(np.asarray(col), row.shape).astype(np.intp)
    per = _per_register(etype)
    e = row.shape[1]
    if e % per:
        raise ValueError(f"{e} {etype} elements do not fill whole registers")
    return Fragment(rows, cols, etype, np.ascontiguousarray(row), np.ascontiguousarray(col), e // per)


# ---- mma.sync: the PTX ISA's layouts -----------------------------------------------------------
def _accumulator(m: int, n: int, etype: str) -> Fragment:
    """C/D of m16n8kK (c0..c3) and m8n8k4/k16 (c0, c1): rows g (+8), columns 2t, 2t+1."""
    i = np.arange(4 if m == 16 else 2)[None, :]
    return _frag(m, n, etype, _G + 8 * (i // 2), 2 * _T + i % 2)


def mma_fragments(shape: str, atype: str, btype: str, ctype: str, dtype: str) -> tuple[Fragment, ...]:
    """(A, B, C, D) fragments of ``mma.sync.aligned.<shape>`` with these types.

    The ISA's tables for every shape but the sm_70 quad-pair m8n8k4 ``.f16`` follow one pattern in
    ``p``, the elements per register (1 for .tf32/.f64, 2 for .f16/.bf16, 4 for 8-bit, 8 for 4-bit,
    32 for .b1): m16n8: ``a_i`` at row ``g + 8 ((i / p) % 2)``, column ``p t + i % p + 4p (i / 2p)``;
    ``b_j`` at row ``p t + j % p + 4p (j / p)``, column ``g``. m8n8 (k = 4p): ``a_i`` at (g, p t + i),
    ``b_j`` at (p t + j, g)."""
    m, n, k = _dims(shape)
    p = _per_register(atype)
    allowed = {8: (4 * p,), 16: (4 * p, 8 * p) + ((16,) if atype == "f64" else ())}.get(m, ())
    m8_types = ("f64", "s8", "u8", "s4", "u4", "b1")
    if n != 8 or k not in allowed or _per_register(btype) != p or (m == 8 and atype not in m8_types):
        raise KeyError(f"mma shape .{shape} with .{atype} multiplicands")
    i = np.arange(m * k // WARP)[None, :]
    j = np.arange(k * n // WARP)[None, :]
    if m == 8:
        a = _frag(m, k, atype, _G + 0 * i, p * _T + i)
        b = _frag(k, n, btype, p * _T + j, _G + 0 * j)
    else:
        a = _frag(m, k, atype, _G + 8 * ((i // p) % 2), p * _T + i % p + 4 * p * (i // (2 * p)))
        b = _frag(k, n, btype, p * _T + j % p + 4 * p * (j // p), _G + 0 * j)
    return a, b, _accumulator(m, n, ctype), _accumulator(m, n, dtype)


def quad_pair_fragments(a_col: bool, b_col: bool, ctype: str, dtype: str) -> tuple[Fragment, ...]:
    """(A, B, C, D) of the sm_70 ``mma.sync.aligned.m8n8k4`` with ``.f16`` multiplicands.

    The warp computes four independent 8x8x4 products, one per quad pair ``q = (%laneid >> 2) % 4``
    (lanes 4q..4q+3 and 4q+16..4q+19; ``h = %laneid >= 16``). The fragments describe the four
    operands stacked: A as 32x4 (row 8q + r), B as 4x32 (column 8q + c), C and D as 32x8 (row 8q + r);
    ``MmaOp`` with ``groups=4`` multiplies block by block. Per the ISA's tables: A ``.row`` a_i at
    (t + 4h, i), ``.col`` at (i + 4h, t); B ``.row`` b_i at (t, i + 4h), ``.col`` at (i, t + 4h);
    ``.f16`` C/D c_i at (t + 4h, i); ``.f32`` C/D c_i at ((l & 1) + (i & 2) + 4h, (i & 4) + (l & 2) + (i & 1))
    with ``t = %laneid % 4``."""
    q, h = 8 * ((_LANE >> 2) & 3), 4 * (_LANE >> 4)
    i4, i8 = np.arange(4)[None, :], np.arange(8)[None, :]
    a = _frag(32, 4, "f16", q + (i4 + h if a_col else _T + h), _T if a_col else i4)
    b = _frag(4, 32, "f16", i4 if b_col else _T, q + (_T + h if b_col else i4 + h))

    def acc(etype: str) -> Fragment:
        if etype == "f16":
            return _frag(32, 8, etype, q + _T + h, i8)
        return _frag(32, 8, etype, q + (_LANE & 1) + (i8 & 2) + h, (i8 & 4) + (_LANE & 2) + (i8 & 1))
    return a, b, acc(ctype), acc(dtype)


# ---- wmma: the emulator's layout ---------------------------------------------------------------
def wmma_fragment(rows: int, cols: int, etype: str, nregs: int, col_major: bool = False) -> Fragment:
    """A wmma fragment of a ``rows x cols`` matrix held in ``nregs`` registers per lane.

    Sub-byte fragments (.s4, .u4, .b1) are ordered like their memory (``col_major``: lane ``l``
    holds elements ``l*U ..`` of the column-major matrix), so that each lane's register is one
    32-bit word of it."""
    unique = rows * cols // WARP
    per = _per_register(etype)
    e = np.arange(nregs * per)[None, :]
    if nregs * per < unique or (nregs * per) % unique:
        raise KeyError(f"{nregs} registers for a {rows}x{cols} .{etype} wmma fragment")
    idx = _LANE * unique + e % unique
    if col_major and ELEMENT_BITS[etype] < 8:
        return _frag(rows, cols, etype, idx % rows, idx // rows)
    return _frag(rows, cols, etype, idx // cols, idx % cols)


def _dims(shape: str) -> tuple[int, int, int]:
    m, rest = shape[1:].split("n")
    n, k = rest.split("k")
    return int(m), int(n), int(k)


WMMA_SHAPES = {"m16n16k16", "m32n8k16", "m8n32k16", "m16n16k8", "m8n8k4", "m8n8k32", "m8n8k128"}


def wmma_matrix(shape: str, which: str) -> tuple[int, int]:
    """(rows, cols) of operand ``which`` (a, b, c or d) of a wmma shape."""
    if shape not in WMMA_SHAPES:
        raise KeyError(f"wmma shape .{shape}")
    m, n, k = _dims(shape)
    return {"a": (m, k), "b": (k, n), "c": (m, n), "d": (m, n)}[which]

