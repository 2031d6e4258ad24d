"""Run-time warp matrix operations the generated block code calls: wmma.load/store, mma, ldmatrix,
stmatrix, movmatrix.

Registers arrive as one value per lane (``.b32`` as uint32, ``.f64`` as uint64 bits). A collective
operation gathers each warp's 32 lanes into a (warps, 32, elements) array, builds the whole
matrices with the fragment layouts of ``fragments``, computes with NumPy and scatters back.

Arithmetic of ``mma`` (the PTX ISA fixes the operand types, not the order of the sums):

* ``.f16``/``.bf16``/``.tf32`` multiplicands: every product is exact in float64 and the sum of a
  row by a column is formed in float64, then rounded once to the accumulator type (``.rn``). The
  hardware adds in an unspecified order, so results may differ from a GPU in the last bits.
* ``.tf32`` operands are ``.b32`` registers of which the tensor core reads only the tf32 bits
  (sign, exponent, ten mantissa bits); the low 13 bits are ignored, not rounded. Programs round
  with ``cvt.rna.tf32.f32`` first (``wmma::__float_to_tf32``).
* ``.f64``: float64 products and sums, ``.rn``.
* ``.s8``/``.u8``/``.s4``/``.u4`` with ``.s32`` accumulators: exact integers (float64 holds every
  sum exactly), wrapped to 32 bits, or clamped to the ``.s32`` range with ``.satfinite``.
* ``.b1`` with ``.and.popc`` / ``.xor.popc``: each product is the population count of the bitwise
  AND (XOR) of a row of A and a column of B.
* ``.e4m3``/``.e5m2`` (fp8) multiplicands: decoded exactly, then summed as for ``.f16``.
"""
from __future__ import annotations

import numpy as np

from .errors import CUDA_ERROR_NOT_SUPPORTED, EmuError
from .fragments import WARP, Fragment

ndarray = np.ndarray
_RAW = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_TF32_MASK = np.uint32(0xFFFFE000)
_S32_MIN, _S32_MAX = -(1 << 31), (1 << 31) - 1


def warps(X, L, what: str) -> int:
    """The number of warps in lanes ``L``; each must be complete (all 32 lanes, together)."""
    n = X.N if L is None else len(L)
    if not _whole_warps(X, L, n):
        raise EmuError(CUDA_ERROR_NOT_SUPPORTED,
                       f"{what} reached by only part of a warp: warp matrix instructions need all 32 lanes "
                       "of the warp together (a block size that is a multiple of 32, no lane exited or "
                       "diverged)")
    return n // WARP


def _whole_warps(X, L, n: int) -> bool:
    """True when lanes ``L`` are whole warps in order (so lane ids run 0..31 in every warp)."""
    if X.T % WARP or n % WARP:
        return False
    if L is None or not n:
        return True
    first = L[::WARP]
    return not (first % WARP).any() and bool((L[WARP - 1::WARP] - first == WARP - 1).all())


def _lane_ids(X, L):
    return X.laneid if L is None else X.laneid[L]


def _registers(regs, n: int, reg_bytes: int) -> ndarray:
    """Per-lane register values as an (n, len(regs)) array of raw bits."""
    buf = np.empty((n, len(regs)), _RAW[reg_bytes])
    for k, v in enumerate(regs):
        buf[:, k] = v
    return buf


def _split(buf: ndarray) -> list:
    """An (n, R) array back into R contiguous per-lane register values."""
    return list(np.ascontiguousarray(buf.T))


def _e4m3_table() -> ndarray:
    """float64 value of every .e4m3 byte: bias 7, three mantissa bits, no infinity, NaN = S.1111.111."""
    b = np.arange(256)
    exp, man = (b >> 3) & 15, b & 7
    mag = np.where(exp == 0, man / 8 * 2.0 ** -6, (1 + man / 8) * 2.0 ** (exp - 7))
    mag = np.where((exp == 15) & (man == 7), np.nan, mag)
    return np.where(b >> 7, -mag, mag)


_E4M3 = _e4m3_table()


def _values(raw: ndarray, etype: str) -> ndarray:
    """Raw element bits as float64 values."""
    if etype == "e4m3":
        return _E4M3[raw]
    if etype == "e5m2":                 # the high byte of an IEEE binary16
        return (raw.astype(np.uint16) << np.uint16(8)).view(np.float16).astype(np.float64)
    if etype == "b1":
        return raw.astype(np.float64)
    if etype in ("s4", "u4"):
        v = raw.astype(np.float64)
        return np.where(raw >= 8, v - 16, v) if etype == "s4" else v
    if etype == "f16":
        return raw.view(np.float16).astype(np.float64)
    if etype == "bf16":
        return (raw.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)
    if etype == "tf32":
        return (raw & _TF32_MASK).view(np.float32).astype(np.float64)
    if etype == "f32":
        return raw.view(np.float32).astype(np.float64)
    if etype == "f64":
        return raw.view(np.float64)
    if etype in ("s8", "s32"):
        return raw.view(np.int8 if etype == "s8" else np.int32).astype(np.float64)
    return raw.astype(np.float64)


def _raw(values: ndarray, etype: str, satfinite: bool) -> ndarray:
    """float64 results as raw accumulator bits."""
    if etype == "f32":
        return values.astype(np.float32).view(np.uint32)
    if etype == "f16":
        return values.astype(np.float16).view(np.uint16)
    if etype == "f64":
        return values.view(np.uint64)
    # .s32: the sums are exact integers
    if satfinite:
        values = np.clip(values, _S32_MIN, _S32_MAX)
    return values.astype(np.int64).astype(np.int32).view(np.uint32)


def _gather_index(frag: Fragment) -> ndarray | None:
    """For each element of the row-major matrix, its first position in the warp's flattened
    (lane, element) fragment; None where that is the identity (the wmma layout)."""
    flat = (frag.row * frag.cols + frag.col).reshape(-1)
    first = np.full(frag.rows * frag.cols, -1, np.intp)
    first[flat[::-1]] = np.arange(flat.size - 1, -1, -1)
    if (first < 0).any():
        raise ValueError("fragment misses matrix elements")
    return None if np.array_equal(first, np.arange(first.size)) else first


def _matrix(regs, frag: Fragment, index, n: int, w: int) -> ndarray:
    """The (warps, rows, cols) float64 matrices that a fragment's registers hold."""
    buf = _registers(regs, n, frag.reg_bytes)
    if frag.ebits == 1:                 # thirty-two elements per register, bit 0 first
        raw = np.unpackbits(buf.view(np.uint8), axis=-1, bitorder="little").reshape(w, WARP * frag.elements)
    elif frag.ebits == 4:               # two elements per byte, the low nibble first
        b = buf.view(np.uint8)
        raw = np.stack([b & np.uint8(15), b >> np.uint8(4)], axis=-1).reshape(w, WARP * frag.elements)
    else:
        raw = buf.view(_RAW[frag.ebytes]).reshape(w, WARP * frag.elements)
    raw = raw[:, : frag.rows * frag.cols] if index is None else np.take(raw, index, axis=1)
    return _values(raw, frag.etype).reshape(w, frag.rows, frag.cols)


class MmaOp:
    """One matrix multiply-accumulate form: D = A * B + C over the fragments of a warp."""

    def __init__(self, name: str, a: Fragment, b: Fragment, c: Fragment, d: Fragment, satfinite: bool,
                 xor_popc: bool = False, groups: int = 1) -> None:
        self.name = name
        self.groups = groups            # independent products stacked in A's rows and B's columns
        self.a, self.b, self.c, self.d = a, b, c, d
        self.satfinite = satfinite
        self.xor_popc = xor_popc
        self._ia, self._ib, self._ic = (_gather_index(f) for f in (a, b, c))
        flat = (d.row * d.cols + d.col).reshape(-1)
        self._scatter_d = None if np.array_equal(flat, np.arange(flat.size)) else flat

    def __call__(self, X, L, a, b, c) -> list:
        w = warps(X, L, self.name)
        n = w * WARP
        ma, mb = _matrix(a, self.a, self._ia, n, w), _matrix(b, self.b, self._ib, n, w)
        if self.groups > 1:                 # (w, G*m, k) x (w, k, G*n) -> (w, G*m, n), block by block
            g = self.groups
            ma = ma.reshape(w, g, -1, ma.shape[2])
            mb = mb.reshape(w, mb.shape[1], g, -1).transpose(0, 2, 1, 3)
            prod = np.matmul(ma, mb).reshape(w, -1, mb.shape[3])
        else:
            prod = np.matmul(ma, mb)
        if self.xor_popc:                   # popc(a ^ b) = popc(a) + popc(b) - 2 popc(a & b)
            prod = ma.sum(axis=2)[:, :, None] + mb.sum(axis=1)[:, None, :] - 2 * prod
        prod += _matrix(c, self.c, self._ic, n, w)
        d = self.d
        out = prod.reshape(w, -1)
        out = out if self._scatter_d is None else np.take(out, self._scatter_d, axis=1)
        raw = _raw(np.ascontiguousarray(out), d.etype, self.satfinite)
        return _split(raw.reshape(n, -1).view(_RAW[d.reg_bytes]))


class WmmaMemory:
    """wmma.load / wmma.store of one fragment: element (r, c) at ``p + (r * stride + c) * size``
    (``.row``) or ``p + (c * stride + r) * size`` (``.col``); stride counts elements. Sub-byte
    elements move as whole 32-bit words, one per lane (their fragments follow the memory order)."""

    def __init__(self, frag: Fragment, col_major: bool) -> None:
        self.frag = frag
        self.col_major = col_major
        self.unique = frag.rows * frag.cols // WARP
        self.per_access = 32 // frag.ebits if frag.ebits < 8 else 1     # elements per access
        self.accesses = self.unique // self.per_access                   # distinct accesses per lane
        self.slots = frag.elements // self.per_access                    # accesses' worth of registers
        self.dt = np.uint32 if frag.ebits < 8 else _RAW[frag.ebytes]
        self._lanes: dict = {}          # batch size -> each lane's index repeated ``accesses`` times

    def default_stride(self) -> int:
        return self.frag.rows if self.col_major else self.frag.cols

    def _addresses(self, X, L, mask, base, stride):
        """Every lane's accesses at once: (addresses, lanes, mask), ``accesses`` per lane."""
        f, u = self.frag, self.accesses
        n = X.N if L is None else len(L)
        major, minor = (f.col, f.row) if self.col_major else (f.row, f.col)
        first = slice(0, self.unique, self.per_access)
        major, minor = major[:, first].astype(np.int64), minor[:, first].astype(np.int64)
        stride = np.asarray(stride).astype(np.int64)
        bdt = np.asarray(base).dtype
        if _whole_warps(X, L, n):           # lane ids repeat 0..31: broadcast over (warp, lane, access)
            shape = (n // WARP, WARP, 1)
            if stride.ndim:
                stride = stride.reshape(shape)
            off = major * stride + minor
            base = np.asarray(base).reshape(shape) if np.ndim(base) else base
            full = (n // WARP, WARP, u)
        else:
            lane = _lane_ids(X, L)
            if stride.ndim:
                stride = stride.reshape(-1, 1)
            off = major[lane] * stride + minor[lane]
            base = np.asarray(base).reshape(-1, 1) if np.ndim(base) else base
            full = (n, u)
        off = (off * f.ebits) >> 3          # elements to bytes
        addr = np.broadcast_to(base + off.astype(bdt), full).reshape(-1)
        lanes = self._lanes.get(n) if L is None else None
        if lanes is None:
            lanes = np.repeat(np.arange(X.N, dtype=np.intp) if L is None else L, u)
            if L is None:
                self._lanes = {n: lanes}
        if type(mask) is ndarray:
            mask = np.repeat(mask, u)
        return addr, lanes, mask

    def load(self, X, L, mask, space: str, base, stride) -> list:
        n = X.N if L is None else len(L)
        u = self.accesses
        addr, lanes, m = self._addresses(X, L, mask, base, stride)
        vals = getattr(X, "ld_" + space)(addr, self.dt, 1, lanes, m)[0]
        raw = np.empty((n, self.slots), self.dt)
        raw[:, :u] = np.broadcast_to(vals, (n * u,)).reshape(n, u)
        for e in range(u, self.slots, u):
            raw[:, e:e + u] = raw[:, :u]
        return _split(raw.view(_RAW[self.frag.reg_bytes]))

    def store(self, X, L, mask, space: str, base, stride, regs) -> None:
        n = X.N if L is None else len(L)
        raw = _registers(regs, n, self.frag.reg_bytes).view(self.dt)[:, : self.accesses]
        addr, lanes, m = self._addresses(X, L, mask, base, stride)
        getattr(X, "st_" + space)(addr, self.dt, (np.ascontiguousarray(raw).reshape(-1),), lanes, m)


def _rows_to_fragments(rows: ndarray, w: int, num: int, trans: bool) -> ndarray:
    """(w, 8*num, 4) words, row r of matrix i at 8i + r, as (w, 32, num) fragment registers."""
    m = rows.reshape(w, num, 8, 4)
    if trans:
        m = np.ascontiguousarray(m.view(np.uint16).swapaxes(2, 3)).view(np.uint32)
    return m.reshape(w, num, WARP).transpose(0, 2, 1)


def ldmatrix(X, L, mask, space: str, addr, num: int, trans: bool) -> list:
    """ldmatrix.sync.aligned.m8n8.x{num}{.trans}.b16: lane 8i + r gives the address of row r of
    matrix i (eight .b16, 16 bytes); lane l receives row l / 4, columns 2 (l % 4) and +1 of each."""
    w = warps(X, L, "ldmatrix")
    lane = _lane_ids(X, L)
    active = lane < 8 * num
    if type(mask) is ndarray:
        active = active & mask
    elif not mask:
        active = np.zeros_like(active)
    words = getattr(X, "ld_" + space)(addr, np.uint32, 4, L, active)
    rows = np.stack([np.broadcast_to(v, lane.shape) for v in words], axis=1).reshape(w, WARP, 4)[:, :8 * num]
    return _split(_rows_to_fragments(rows, w, num, trans).reshape(w * WARP, num))


def stmatrix(X, L, mask, space: str, addr, num: int, trans: bool, regs) -> None:
    """stmatrix.sync.aligned.m8n8.x{num}{.trans}.shared.b16: the inverse of ldmatrix."""
    w = warps(X, L, "stmatrix")
    n = w * WARP
    lane = _lane_ids(X, L)
    frags = _registers(regs, n, 4).reshape(w, WARP, num).transpose(0, 2, 1)   # (w, num, 32)
    m = np.ascontiguousarray(frags).reshape(w, num, 8, 4)
    if trans:
        m = np.ascontiguousarray(m.view(np.uint16).swapaxes(2, 3)).view(np.uint32)
    rows = np.zeros((w, WARP, 4), np.uint32)
    rows[:, :8 * num] = m.reshape(w, 8 * num, 4)
    rows = rows.reshape(n, 4)
    active = lane < 8 * num
    if type(mask) is ndarray:
        active = active & mask
    elif not mask:
        return
    getattr(X, "st_" + space)(addr, np.uint32, tuple(rows[:, k] for k in range(4)), L, active)


def movmatrix(X, L, a) -> ndarray:
    """movmatrix.sync.aligned.m8n8.trans.b16: the transpose of the warp's 8x8 .b16 fragment."""
    w = warps(X, L, "movmatrix")
    frag = _registers((a,), w * WARP, 4).reshape(w, 8, 4)       # lane l: row l / 4, word l % 4
    t = np.ascontiguousarray(frag.view(np.uint16).swapaxes(1, 2)).view(np.uint32)
    return t.reshape(w * WARP)


def round_tf32(bits, mode: str):
    """f32 bits rounded to tf32 (``.rna``: to nearest, ties away from zero; ``.rn``: ties to even;
    ``.rz``: toward zero); infinities and NaNs pass unchanged."""
    b = np.asarray(bits, np.uint32)
    if mode == "rz":
        r = b & _TF32_MASK
    elif mode == "rna":
        r = (b + np.uint32(0x1000)) & _TF32_MASK
    else:
        r = (b + np.uint32(0xFFF) + ((b >> np.uint32(13)) & np.uint32(1))) & _TF32_MASK
    out = np.where((b & np.uint32(0x7F800000)) == np.uint32(0x7F800000), b, r)
    return out if out.ndim else out[()]
