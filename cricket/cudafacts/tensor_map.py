"""CUtensorMap (cuda.h: 128 opaque bytes, 64-byte aligned): the tiled form as cricket lays it out.

NVIDIA keeps the layout private, so the client (``cuTensorMapEncodeTiled`` in the driver face)
writes this one and the emu interpreter reads it (``cp.async.bulk.tensor``). The checks are those
``cuda.h`` documents for ``cuTensorMapEncodeTiled``; a violation is ``TensorMapError``
(CUDA_ERROR_INVALID_VALUE), and a documented form the emulator does not copy (interleaved layouts,
the packed 4/6-bit types, the 32/64-byte-atom swizzles) is ``TensorMapUnsupported``.
"""
from __future__ import annotations

from dataclasses import dataclass

SIZE = 128
ALIGN = 64
MAX_RANK = 5
MAGIC = 0x50414D54            # "TMAP"
VERSION = 1

# CUtensorMapDataType -> element size in bytes (the packed 4/6-bit types are not copied)
UINT8, UINT16, UINT32, INT32, UINT64, INT64, FLOAT16, FLOAT32, FLOAT64, BFLOAT16, FLOAT32_FTZ, TFLOAT32, \
    TFLOAT32_FTZ = range(13)
ELEMENT_SIZE = {UINT8: 1, UINT16: 2, UINT32: 4, INT32: 4, UINT64: 8, INT64: 8, FLOAT16: 2, FLOAT32: 4,
                FLOAT64: 8, BFLOAT16: 2, FLOAT32_FTZ: 4, TFLOAT32: 4, TFLOAT32_FTZ: 4}
FLOAT_TYPES = {FLOAT16, FLOAT32, FLOAT64, BFLOAT16, FLOAT32_FTZ, TFLOAT32, TFLOAT32_FTZ}
PACKED_TYPES = {13, 14, 15}
INTERLEAVE_NONE = 0
SWIZZLE_NONE, SWIZZLE_32B, SWIZZLE_64B, SWIZZLE_128B = 0, 1, 2, 3
SWIZZLE_BYTES = {SWIZZLE_32B: 32, SWIZZLE_64B: 64, SWIZZLE_128B: 128}
OOB_FILL_ZERO, OOB_FILL_NAN = 0, 1       # CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE / _NAN_REQUEST_ZERO_FMA

# Byte layout (little-endian): magic u32, version u8, data type u8, rank u8, swizzle u8, oob fill u8,
# 7 spare bytes, global address u64 at 16, dims u32[5] at 24, strides u64[4] at 48 (dims 1..4, bytes),
# box u16[5] at 80, element strides u8[5] at 90; the rest zero.
_DIMS, _STRIDES, _BOX, _ESTRIDES = 24, 48, 80, 90


class TensorMapError(ValueError):
    """A tensor map argument outside what cuda.h allows."""


class TensorMapUnsupported(ValueError):
    """A documented tensor map form that the emulator does not copy."""


@dataclass(frozen=True)
class TiledTensorMap:
    """The tiled tensor map's fields; ``strides[0]`` is the element size, then the bytes of dims 1.."""
    data_type: int
    rank: int
    address: int
    dims: tuple[int, ...]
    strides: tuple[int, ...]
    box: tuple[int, ...]
    element_strides: tuple[int, ...]
    swizzle: int = SWIZZLE_NONE
    oob_fill: int = OOB_FILL_ZERO

    @property
    def element_size(self) -> int:
        return ELEMENT_SIZE[self.data_type]

    @property
    def box_elements(self) -> tuple[int, ...]:
        """Elements copied along each dimension: ceil(box / element stride), the first stride ignored."""
        return tuple(self.box[0] if k == 0 else -(-self.box[k] // self.element_strides[k]) for k in range(self.rank))

    @property
    def box_bytes(self) -> int:
        n = self.element_size
        for e in self.box_elements:
            n *= e
        return n

    def pack(self) -> bytes:
        out = bytearray(SIZE)
        out[0:4] = MAGIC.to_bytes(4, "little")
        out[4:9] = bytes((VERSION, self.data_type, self.rank, self.swizzle, self.oob_fill))
        out[16:24] = self.address.to_bytes(8, "little")
        for k in range(self.rank):
            out[_DIMS + 4 * k:_DIMS + 4 * k + 4] = (self.dims[k] - 1).to_bytes(4, "little")   # 2**32 fits
            out[_BOX + 2 * k:_BOX + 2 * k + 2] = self.box[k].to_bytes(2, "little")
            out[_ESTRIDES + k] = self.element_strides[k]
            if k:
                out[_STRIDES + 8 * (k - 1):_STRIDES + 8 * k] = self.strides[k].to_bytes(8, "little")
        return bytes(out)

    @classmethod
    def unpack(cls, raw: bytes) -> "TiledTensorMap":
        """Read and re-check a map (a kernel may hand over any 128 bytes); TensorMapError if invalid."""
        if len(raw) != SIZE or int.from_bytes(raw[0:4], "little") != MAGIC or raw[4] != VERSION:
            raise TensorMapError("not a tensor map made by cuTensorMapEncodeTiled")
        dtype, rank, swizzle, oob = raw[5], raw[6], raw[7], raw[8]
        if not 1 <= rank <= MAX_RANK:
            raise TensorMapError(f"tensor map of rank {rank}")
        u = lambda a, n: int.from_bytes(raw[a:a + n], "little")   # noqa: E731
        dims = tuple(u(_DIMS + 4 * k, 4) + 1 for k in range(rank))
        strides = tuple(u(_STRIDES + 8 * (k - 1), 8) for k in range(1, rank))
        box = tuple(u(_BOX + 2 * k, 2) for k in range(rank))
        estrides = tuple(raw[_ESTRIDES + k] for k in range(rank))
        return encode_tiled(dtype, rank, u(16, 8), dims, strides, box, estrides, INTERLEAVE_NONE, swizzle, oob)


def encode_tiled(data_type: int, rank: int, address: int, dims, strides, box, element_strides,
                 interleave: int = INTERLEAVE_NONE, swizzle: int = SWIZZLE_NONE, oob_fill: int = OOB_FILL_ZERO
                 ) -> TiledTensorMap:
    """``cuTensorMapEncodeTiled``'s checks; ``strides`` are the rank-1 byte strides of dims 1.."""
    if data_type in PACKED_TYPES or interleave != INTERLEAVE_NONE or swizzle > SWIZZLE_128B:
        raise TensorMapUnsupported(f"tensor map with data type {data_type}, interleave {interleave}, "
                                   f"swizzle {swizzle} (the emulator copies unpacked, non-interleaved tiles "
                                   "with no swizzle or the 32/64/128-byte swizzles)")
    if data_type not in ELEMENT_SIZE:
        raise TensorMapError(f"tensor map data type {data_type}")
    if not 1 <= rank <= MAX_RANK:
        raise TensorMapError(f"tensor rank {rank} (1 to {MAX_RANK})")
    dims, strides, box, element_strides = (tuple(int(v) for v in x) for x in (dims, strides, box, element_strides))
    if len(dims) != rank or len(strides) != rank - 1 or len(box) != rank or len(element_strides) != rank:
        raise TensorMapError("tensor map arrays of the wrong length")
    es = ELEMENT_SIZE[data_type]
    if address % 16:
        raise TensorMapError(f"global address {address:#x} is not 16-byte aligned")
    if any(not 0 < d <= 1 << 32 for d in dims):
        raise TensorMapError(f"global dims {dims} (each 1 to 2**32)")
    if any(s % 16 or not 0 < s < 1 << 40 for s in strides):
        raise TensorMapError(f"global strides {strides} (multiples of 16 below 2**40)")
    if any(not 0 < b <= 256 for b in box) or (box[0] * es) % 16:
        raise TensorMapError(f"box {box} (each 1 to 256, the inner one a multiple of 16 bytes)")
    if any(not 0 < e <= 8 for e in element_strides):
        raise TensorMapError(f"element strides {element_strides} (each 1 to 8)")
    if swizzle in SWIZZLE_BYTES and box[0] * es > SWIZZLE_BYTES[swizzle]:
        raise TensorMapError(f"box inner dimension of {box[0] * es} bytes exceeds the {SWIZZLE_BYTES[swizzle]}-byte "
                             "swizzle")
    if oob_fill not in (OOB_FILL_ZERO, OOB_FILL_NAN) or (oob_fill == OOB_FILL_NAN and data_type not in FLOAT_TYPES):
        raise TensorMapError(f"out-of-bound fill {oob_fill} for data type {data_type}")
    return TiledTensorMap(data_type, rank, address, dims, (es,) + strides, box, element_strides, swizzle, oob_fill)
