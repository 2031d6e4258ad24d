"""Warp-level matrix fragments: which element of a matrix each lane's registers hold.

A fragment is a few registers per lane, spread over the 32 lanes of a warp. A ``Fragment`` maps
(lane, element) to (row, column) of the whole matrix and says how elements pack into registers.

* ``mma.sync`` fragments follow the PTX ISA's tables ("Matrix Fragments for mma.mMnNkK"), with
  ``g = %laneid >> 2`` (groupID) and ``t = %laneid % 4`` (threadID_in_group).
* ``wmma`` fragments: the PTX ISA leaves their distribution over the lanes unspecified, and a
  program can only rely on all fragments of one kind sharing one layout (so that element-wise
  loops over ``frag.x[i]`` work). The emulator uses a plain one: lane ``l`` holds elements
  ``l*U .. l*U+U-1`` of the row-major matrix, ``U = rows*cols/32``. Where the ISA gives a
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
                "s4": 4, "u4": 4, "e4m3": 8, "e5m2": 8}


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
    """(A, B, C, D) fragments of ``mma.sync.aligned.<shape>`` with these types."""
    m, n, k = _dims(shape)
    t8 = atype in ("s8", "u8", "e4m3", "e5m2")      # four 8-bit elements per register
    t4 = atype in ("s4", "u4")                      # eight 4-bit elements per register
    if shape == "m8n8k4" and atype == "f64":
        a = _frag(8, 4, "f64", _G, _T)
        b = _frag(4, 8, "f64", _T, _G)
    elif shape == "m8n8k16" and t8:
        i = np.arange(4)[None, :]
        a = _frag(8, 16, atype, _G, 4 * _T + i)
        b = _frag(16, 8, btype, 4 * _T + i, _G)
    elif shape in ("m16n8k4", "m16n8k8", "m16n8k16") and atype in ("tf32", "f64") and (k < 16 or atype == "f64"):
        # a_i: row g + 8 (i % 2), col t + 4 (i / 2); b_j: row t + 4j, col g
        i = np.arange(k // 2)[None, :]
        a = _frag(16, k, atype, _G + 8 * (i % 2), _T + 4 * (i // 2))
        j = np.arange(k // 4)[None, :]
        b = _frag(k, 8, btype, _T + 4 * j, _G)
    elif shape == "m16n8k8" and atype in ("f16", "bf16"):
        i = np.arange(4)[None, :]
        a = _frag(16, 8, atype, _G + 8 * (i // 2), 2 * _T + i % 2)
        j = np.arange(2)[None, :]
        b = _frag(8, 8, btype, 2 * _T + j, _G)
    elif shape == "m16n8k16" and atype in ("f16", "bf16"):
        i = np.arange(8)[None, :]
        a = _frag(16, 16, atype, _G + 8 * ((i // 2) % 2), 2 * _T + i % 2 + 8 * (i // 4))
        j = np.arange(4)[None, :]
        b = _frag(16, 8, btype, 2 * _T + j % 2 + 8 * (j // 2), _G)
    elif shape == "m8n8k32" and t4:
        i = np.arange(8)[None, :]
        a = _frag(8, 32, atype, _G, 8 * _T + i)
        b = _frag(32, 8, btype, 8 * _T + i, _G)
    elif shape in ("m16n8k32", "m16n8k64") and t4:
        # a_i: row g + 8 ((i / 8) % 2), col 8t + (i % 8) + 32 (i / 16); b_j: row 8t + (j % 8) + 32 (j / 8)
        i = np.arange(k // 2)[None, :]
        a = _frag(16, k, atype, _G + 8 * ((i // 8) % 2), 8 * _T + i % 8 + 32 * (i // 16))
        j = np.arange(k // 4)[None, :]
        b = _frag(k, 8, btype, 8 * _T + j % 8 + 32 * (j // 8), _G)
    elif shape == "m16n8k16" and t8:
        i = np.arange(8)[None, :]
        a = _frag(16, 16, atype, _G + 8 * (i // 4), 4 * _T + i % 4)
        j = np.arange(4)[None, :]
        b = _frag(16, 8, btype, 4 * _T + j, _G)
    elif shape == "m16n8k32" and t8:
        i = np.arange(16)[None, :]
        a = _frag(16, 32, atype, _G + 8 * ((i // 4) % 2), 4 * _T + i % 4 + 16 * (i // 8))
        j = np.arange(8)[None, :]
        b = _frag(32, 8, btype, 4 * _T + j % 4 + 16 * (j // 4), _G)
    else:
        raise KeyError(f"mma shape .{shape} with .{atype} multiplicands")
    assert (a.rows, a.cols, b.rows, b.cols) == (m, k, k, n)
    return a, b, _accumulator(m, n, ctype), _accumulator(m, n, dtype)


# ---- wmma: the emulator's layout ---------------------------------------------------------------
def wmma_fragment(rows: int, cols: int, etype: str, nregs: int) -> Fragment:
    """A wmma fragment of a ``rows x cols`` matrix held in ``nregs`` registers per lane."""
    unique = rows * cols // WARP
    per = _per_register(etype)
    e = np.arange(nregs * per)[None, :]
    if nregs * per < unique or (nregs * per) % unique:
        raise KeyError(f"{nregs} registers for a {rows}x{cols} .{etype} wmma fragment")
    idx = _LANE * unique + e % unique
    return _frag(rows, cols, etype, idx // cols, idx % cols)


def _dims(shape: str) -> tuple[int, int, int]:
    m, rest = shape[1:].split("n")
    n, k = rest.split("k")
    return int(m), int(n), int(k)


WMMA_SHAPES = {"m16n16k16", "m32n8k16", "m8n32k16", "m16n16k8", "m8n8k4"}


def wmma_matrix(shape: str, which: str) -> tuple[int, int]:
    """(rows, cols) of operand ``which`` (a, b, c or d) of a wmma shape."""
    if shape not in WMMA_SHAPES:
        raise KeyError(f"wmma shape .{shape}")
    m, n, k = _dims(shape)
    return {"a": (m, k), "b": (k, n), "c": (m, n), "d": (m, n)}[which]

