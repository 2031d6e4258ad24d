"""CUDA arrays, texture and surface objects, and strided copies over a cricket connection.

The Python face of CR_ARRAY_*, CR_MEMCPY_3D* and CR_TEXOBJ_* (the runtime and driver faces in
``arrays_runtime.py`` build on it). An array's layout comes from the server; copies into and out of
it are boxes of rows (``cr_memcpy3d_args``), split so that no call carries more than the inline limit.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from ..protocol import gen as P

log = logging.getLogger(__name__)

MAX_INLINE = 4194304                    # CRICKET_MAX_INLINE
# cudaChannelFormatKind
FORMAT_SIGNED, FORMAT_UNSIGNED, FORMAT_FLOAT = 0, 1, 2
# cudaArray flags
ARRAY_LAYERED, ARRAY_SURFACE_LDST, ARRAY_CUBEMAP = 1, 2, 4
# cudaResourceType
RESOURCE_ARRAY, RESOURCE_MIPMAPPED, RESOURCE_LINEAR, RESOURCE_PITCH2D = 0, 1, 2, 3
# cudaTextureAddressMode / FilterMode / ReadMode
ADDRESS_WRAP, ADDRESS_CLAMP, ADDRESS_MIRROR, ADDRESS_BORDER = 0, 1, 2, 3
FILTER_POINT, FILTER_LINEAR = 0, 1
READ_ELEMENT, READ_NORMALIZED_FLOAT = 0, 1


@dataclass(frozen=True)
class ChannelFormat:
    """cudaChannelFormatDesc: bits of x, y, z, w and the kind."""
    x: int
    y: int = 0
    z: int = 0
    w: int = 0
    kind: int = FORMAT_FLOAT

    @property
    def element_size(self) -> int:
        return (self.x + self.y + self.z + self.w) // 8

    def wire(self) -> Any:
        return P.cr_channel_format(x=self.x, y=self.y, z=self.z, w=self.w, kind=self.kind)


@dataclass(frozen=True)
class Level:
    offset: int
    pitch: int
    slice: int
    width: int
    height: int
    depth: int


@dataclass
class CudaArray:
    """One array (or mipmapped array) on the server; ``levels[k]`` is where level k lies."""
    conn: Any
    base: int
    format: ChannelFormat
    width: int
    height: int
    depth: int
    flags: int
    levels: list[Level] = field(default_factory=list)

    def level(self, k: int) -> "CudaArray":
        """A mipmap level as an array of its own (not freeable): cudaGetMipmappedArrayLevel."""
        lv = self.levels[k]
        sub = CudaArray(self.conn, self.base + lv.offset, self.format, lv.width,
                        lv.height if self.height else 0, lv.depth if self.depth else 0, self.flags,
                        [Level(0, lv.pitch, lv.slice, lv.width, lv.height, lv.depth)])
        sub._owned = False
        return sub

    def box(self, x_bytes: int = 0, y: int = 0, z: int = 0, level: int = 0) -> Any:
        lv = self.levels[level]
        return P.cr_box(base=self.base + lv.offset + z * lv.slice + y * lv.pitch + x_bytes,
                        pitch=lv.pitch, slice=lv.slice)

    def copy_from_host(self, data: Any, level: int = 0) -> None:
        """The whole level from host bytes laid out tightly (rows of width * element size)."""
        lv = self.levels[level]
        copy_htod(self.conn, self.box(level=level), memoryview(data).cast("B"),
                  lv.width * self.format.element_size, lv.height, lv.depth)

    def to_host(self, level: int = 0) -> bytes:
        lv = self.levels[level]
        return copy_dtoh(self.conn, self.box(level=level), lv.width * self.format.element_size,
                         lv.height, lv.depth)

    def free(self) -> None:
        if getattr(self, "_owned", True) and self.base:
            self.conn._check(self.conn._stub.CR_ARRAY_DESTROY(self.base), "cudaFreeArray")
            self.base = 0


def create_array(conn: Any, fmt: ChannelFormat, width: int, height: int = 0, depth: int = 0,
                 flags: int = 0, levels: int = 1) -> CudaArray:
    """cudaMalloc3DArray (levels 1) or cudaMallocMipmappedArray."""
    res = conn._check(conn._stub.CR_ARRAY_CREATE(P.cr_array_args(
        format=fmt.wire(), width=width, height=height, depth=depth, flags=flags, levels=levels)),
        "cudaMalloc3DArray")
    a = res.array
    return CudaArray(conn, a.base, fmt, width, height, depth, flags,
                     [Level(lv.offset, lv.pitch, lv.slice, lv.width, lv.height, lv.depth) for lv in a.levels])


def _no_box() -> Any:
    return P.cr_box(base=0, pitch=0, slice=0)


def _rows_per_call(width: int, height: int) -> int:
    return max(1, min(height, MAX_INLINE // max(width, 1)))


def copy_htod(conn: Any, dst: Any, data: memoryview, width: int, height: int, depth: int,
              stream: int = 0) -> None:
    """Host rows packed tightly to a device box; split by slices and rows to fit one call each."""
    if len(data) < width * height * depth:
        raise ValueError(f"{len(data)} host bytes for {depth} x {height} rows of {width}")
    if width > MAX_INLINE:
        raise ValueError(f"a row of {width} bytes is larger than one call carries")
    step = _rows_per_call(width, height)
    for z in range(depth):
        for y in range(0, height, step):
            rows = min(step, height - y)
            start = (z * height + y) * width
            a = P.cr_memcpy3d_args(dst=P.cr_box(base=dst.base + z * dst.slice + y * dst.pitch, pitch=dst.pitch,
                                                slice=dst.slice),
                                   src=_no_box(), width=width, height=rows, depth=1, stream=stream,
                                   data=bytes(data[start:start + rows * width]))
            conn._check(conn._stub.CR_MEMCPY_3D(a), "cudaMemcpy3D")


def copy_dtoh(conn: Any, src: Any, width: int, height: int, depth: int, stream: int = 0) -> bytes:
    """A device box as host rows packed tightly."""
    if width > MAX_INLINE:
        raise ValueError(f"a row of {width} bytes is larger than one call carries")
    out = bytearray()
    step = _rows_per_call(width, height)
    for z in range(depth):
        for y in range(0, height, step):
            rows = min(step, height - y)
            a = P.cr_memcpy3d_args(dst=_no_box(), src=P.cr_box(base=src.base + z * src.slice + y * src.pitch,
                                                               pitch=src.pitch, slice=src.slice),
                                   width=width, height=rows, depth=1, stream=stream, data=b"")
            out += conn._check(conn._stub.CR_MEMCPY_3D_DTOH(a), "cudaMemcpy3D").data
    return bytes(out)


def copy_dtod(conn: Any, dst: Any, src: Any, width: int, height: int, depth: int, stream: int = 0) -> None:
    a = P.cr_memcpy3d_args(dst=dst, src=src, width=width, height=height, depth=depth, stream=stream, data=b"")
    conn._check(conn._stub.CR_MEMCPY_3D(a), "cudaMemcpy3D")


@dataclass(frozen=True)
class Sampling:
    """cudaTextureDesc as the server takes it (sRGB, anisotropy and the others are ignored)."""
    address: tuple[int, int, int] = (ADDRESS_WRAP, ADDRESS_WRAP, ADDRESS_WRAP)
    filter: int = FILTER_POINT
    read_mode: int = READ_ELEMENT
    normalized: bool = False
    border: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)
    mip_filter: int = FILTER_POINT
    lod_bias: float = 0.0
    min_lod: float = 0.0
    max_lod: float = 0.0


@dataclass(frozen=True)
class Resource:
    """cudaResourceDesc: an array, or linear / pitch-2D device memory with its format."""
    type: int
    array: CudaArray | None = None
    base: int = 0
    format: ChannelFormat = ChannelFormat(32)
    width: int = 0                      # linear: bytes (sizeInBytes); pitch 2D: elements
    height: int = 0
    pitch: int = 0


def _texobj_args(res: Resource, surface: bool, s: Sampling) -> Any:
    if res.type in (RESOURCE_ARRAY, RESOURCE_MIPMAPPED):
        kind, base, fmt = 0, res.array.base, res.array.format
    else:
        kind, base, fmt = (1 if res.type == RESOURCE_LINEAR else 2), res.base, res.format
    return P.cr_texobj_args(surface=surface, resource=kind, base=base, format=fmt.wire(), width=res.width,
                            height=res.height, pitch=res.pitch, address=list(s.address), filter=s.filter,
                            read_mode=s.read_mode, normalized=s.normalized, border=list(s.border),
                            mip_filter=s.mip_filter, lod_bias=s.lod_bias, min_lod=s.min_lod, max_lod=s.max_lod)


def create_texture(conn: Any, res: Resource, sampling: Sampling = Sampling()) -> int:
    """cudaCreateTextureObject: the 64-bit handle a kernel receives."""
    return conn._check(conn._stub.CR_TEXOBJ_CREATE(_texobj_args(res, False, sampling)),
                       "cudaCreateTextureObject").ptr


def create_surface(conn: Any, res: Resource) -> int:
    """cudaCreateSurfaceObject (the resource must be an array)."""
    return conn._check(conn._stub.CR_TEXOBJ_CREATE(_texobj_args(res, True, Sampling())),
                       "cudaCreateSurfaceObject").ptr


def destroy_object(conn: Any, handle: int) -> None:
    """cudaDestroyTextureObject / cudaDestroySurfaceObject."""
    conn._check(conn._stub.CR_TEXOBJ_DESTROY(handle), "cudaDestroyTextureObject")
