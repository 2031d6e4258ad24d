"""TMA tensor copies: ``cp.async.bulk.tensor`` (tile mode, 1D-5D) between global and shared memory.

The tensor map (``cricket.cudafacts.tensor_map``, written by ``cuTensorMapEncodeTiled``) is read
from wherever the kernel's generic address points: a ``__grid_constant__`` parameter or device
memory, and checked again, since a kernel may hand over any 128 bytes. As every asynchronous copy
here, the copy is done at once; a load then completes its box's bytes on the mbarrier
(``.mbarrier::complete_tx::bytes``), out-of-bound elements included, as the ISA counts them.

The box lands in shared memory in row-major order, dimension 0 innermost, ceil(box / element
stride) elements along each dimension; out-of-bound elements read as zero (or a NaN with
``CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA``) and are not written by a store. The 32/64/
128-byte swizzles permute 16-byte chunks within each span: shared address bits [4, 4+b) are XORed
with bits [7, 7+b), b = 1, 2, 3 (CUTLASS's Swizzle<b, 4, 3>; programs align such boxes to 1024
bytes, where address and offset agree); not verified against a GPU.
"""
from __future__ import annotations

import numpy as np

from ...cudafacts import tensor_map as tm
from ...cudafacts.tensor_map import SIZE, SWIZZLE_BYTES, TensorMapError, TiledTensorMap
from .atomics import atomic_apply
from .errors import CUDA_ERROR_ILLEGAL_ADDRESS, CUDA_ERROR_MISALIGNED_ADDRESS, EmuError, not_supported
from .ptx.ast import Instr, Vec

_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
REDUCE_OPS = ("add", "min", "max", "inc", "dec", "and", "or", "xor")
# element types a bulk reduction computes in, by tensor map data type (bf16 and tf32 are not reduced)
_REDUCE_TYPES = {tm.UINT32: np.uint32, tm.INT32: np.int32, tm.UINT64: np.uint64, tm.INT64: np.int64,
                 tm.FLOAT16: np.float16, tm.FLOAT32: np.float32, tm.FLOAT32_FTZ: np.float32, tm.FLOAT64: np.float64}
SHARED_ALIGN = 128          # the ISA's alignment of a tensor copy's shared-memory box


def _box_layout(m: TiledTensorMap, coords: list[int], base: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(global byte offsets, inside-the-tensor mask, shared addresses from ``base``) of the box's elements."""
    be = m.box_elements
    axes = [coords[k] + np.arange(be[k], dtype=np.int64) * (1 if k == 0 else m.element_strides[k])
            for k in range(m.rank)]
    grids = np.ix_(*axes[::-1])                    # dimension 0 varies fastest
    inside = np.ones((), bool)
    goff = np.zeros((), np.int64)
    for k, g in enumerate(grids[::-1]):
        inside = inside & (g >= 0) & (g < m.dims[k])
        goff = goff + g * m.strides[k]
    shape = tuple(be[::-1])
    inside = np.broadcast_to(inside, shape).reshape(-1)
    goff = np.broadcast_to(goff, shape).reshape(-1)
    saddr = base + np.arange(goff.size, dtype=np.int64) * m.element_size
    span = SWIZZLE_BYTES.get(m.swizzle)
    if span:                                       # on the address's bits, as the hardware sees them
        saddr ^= ((saddr >> 7) & (span // 16 - 1)) << 4
    return goff, inside, saddr


def _oob_value(m: TiledTensorMap):
    if m.oob_fill:                                 # a quiet NaN of the element's width
        return _UINT[m.element_size]((1 << (8 * m.element_size - 1)) - 1)
    return 0


def tensor_copy(X, to_shared: bool, rank: int, smem, tmap, coords: list, L, mask, op: str | None = None
                ) -> np.ndarray:
    """Copy each acting lane's box; returns the box bytes per lane (0 where a lane did not act).
    ``op``: a bulk reduction (``cp.reduce.async.bulk.tensor``) of the box into global memory."""
    n = X._lane_count(L)
    out = np.zeros(n, np.uint32)
    sm = np.broadcast_to(np.asarray(smem).astype(np.uint64), (n,))
    tm = np.broadcast_to(np.asarray(tmap).astype(np.uint64), (n,))
    cs = [np.broadcast_to(np.asarray(c).astype(np.int32), (n,)) for c in coords]
    what = "cp.async.bulk.tensor"
    for pos in X._positions(L, mask):
        try:
            m = TiledTensorMap.unpack(X.param_bytes(int(tm[pos]), SIZE))
        except TensorMapError as e:
            raise EmuError(CUDA_ERROR_ILLEGAL_ADDRESS, f"{what}: {e} at {int(tm[pos]):#x}") from None
        if m.rank != rank:
            raise EmuError(CUDA_ERROR_ILLEGAL_ADDRESS, f"{what}.{rank}d with a rank-{m.rank} tensor map")
        base = int(sm[pos])
        if base % SHARED_ALIGN:
            raise EmuError(CUDA_ERROR_MISALIGNED_ADDRESS, f"{what}: shared address {base:#x} is not "
                                                          f"{SHARED_ALIGN}-byte aligned")
        if base + m.box_bytes > X.shared_limit:      # before any array of the box's size is made
            raise EmuError(CUDA_ERROR_ILLEGAL_ADDRESS, f"{what}: a box of {m.box_bytes} bytes at shared offset "
                                                       f"{base:#x} overruns the block's {X.shared_limit} bytes")
        goff, inside, saddr = _box_layout(m, [int(c[pos]) for c in cs], base)
        es = m.element_size
        udt = _UINT[es]
        lane = np.array([pos if L is None else L[pos]], np.intp)
        sidx = X._shared_index(saddr.astype(np.uint64), es, es, lane, None)
        gaddr = (np.uint64(m.address) + goff[inside].astype(np.uint64))
        gidx = X.mem.check(gaddr, es, es)
        if to_shared:
            box = np.full(goff.size, _oob_value(m), udt)
            box[inside] = X.mem.view(udt)[gidx]
            X._sview(udt)[sidx] = box
        elif op is not None:
            dt = _REDUCE_TYPES.get(m.data_type)
            if dt is None:
                raise EmuError(CUDA_ERROR_ILLEGAL_ADDRESS, f"cp.reduce.async.bulk.tensor.{op} of tensor map data "
                                                           f"type {m.data_type}")
            atomic_apply(X.mem.view(dt), np.asarray(gidx, np.intp), op, X._sview(dt)[sidx][inside], None,
                         np.dtype(dt))
        else:
            X.mem.view(udt)[gidx] = X._sview(udt)[sidx][inside]
        out[pos] = m.box_bytes
    return out


class TensorCopyEmitters:
    """Code generation for ``cp.async.bulk.tensor`` (called by ``AsyncEmitters.op_cp``)."""

    def op_tensor_copy(self, ins: Instr, idx: int) -> None:
        mods = ins.mods
        if "tile" not in mods or any(x.startswith("im2col") for x in mods):
            raise not_supported(f"tensor copy `{ins.text()}` (the emulator copies in tile mode)")
        rank = next((int(x[0]) for x in mods if len(x) == 2 and x[1] == "d" and x[0] in "12345"), None)
        spaces = [x.split("::")[0] for x in mods if x.split("::")[0] in ("shared", "global")]
        if rank is None or len(spaces) != 2:
            raise not_supported(f"tensor copy `{ins.text()}`")
        to_shared = spaces[0] == "shared"
        op = next((x for x in mods if x in REDUCE_OPS), None) if "reduce" in mods else None
        ops = ins.operands
        smem_o, grp = (ops[0], ops[1]) if to_shared else (ops[1], ops[0])
        _, smem = self.address(smem_o, "shared")
        tmap = self.src(grp.items[0], "u64")
        items = grp.items[1].items if isinstance(grp.items[1], Vec) else (grp.items[1],)
        coords = [self.src(c, "s32") for c in items]
        m = self.mask_expr()
        if to_shared and any(x.startswith("multicast") for x in mods):
            # every CTA is its own 1x1x1 cluster: the copy reaches this CTA when bit 0 of ctaMask is set
            m = f"(({m}) & ((({self.src(ops[3], 'u32')}) & 1) != 0))"
        self.kc.ns.setdefault("tensor_copy", tensor_copy)
        self.at(idx)
        r = self.new_tmp()
        self.emit(f"{r} = tensor_copy(X, {to_shared}, {rank}, {smem}, {tmap}, [{', '.join(coords)}], L, {m}, {op!r})")
        if to_shared and any(x.startswith("mbarrier") for x in mods):
            sp, a = self._mbar_addr(ins, ops[2])
            self.emit(f"mbar(X, 'complete_tx', {sp!r}, {a}, {r}, L, {m})")
