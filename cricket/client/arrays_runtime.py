"""The runtime API's CUDA arrays, texture and surface objects (forwarded by cext/preload/forward_runtime.c).

Array handles (``cudaArray_t``, ``cudaMipmappedArray_t``) are the arrays' device addresses, and a
mipmap level's handle is its address with ``LEVEL_TAG`` set; texture and surface handles are the
64-bit values the server returns. Copies of every shape arrive as one flat box description.
"""
from __future__ import annotations

import logging
import struct

from cricket.client import arrays as ca
from cricket.client.faces import implements
from cricket.client.runtime import D2D, D2H, DEFAULT, ERR_INVALID_VALUE, H2D, RUNTIME, SUCCESS, hostmem
from cricket.client.runtime_face import RUNTIME_API

log = logging.getLogger(__name__)

rt = RUNTIME
LEVEL_TAG = 1 << 62
FLAGS_KNOWN = ca.ARRAY_LAYERED | ca.ARRAY_SURFACE_LDST | ca.ARRAY_CUBEMAP
TEXTURE_GATHER = 8                       # cudaArrayTextureGather: every emulated array can gather
COPY_ELEMENTS = 1

_arrays: dict[int, ca.CudaArray] = {}
_objects: dict[int, tuple[int, ...]] = {}   # handle -> the resource words it was made from


def format_of(word: int) -> ca.ChannelFormat:
    return ca.ChannelFormat(word & 0xFF, word >> 8 & 0xFF, word >> 16 & 0xFF, word >> 24 & 0xFF, word >> 32)


def format_word(f: ca.ChannelFormat) -> int:
    return f.x | f.y << 8 | f.z << 16 | f.w << 24 | f.kind << 32


def array_of(handle: int) -> ca.CudaArray:
    """The array behind a cudaArray_t / CUarray handle of this process."""
    a = _arrays.get(handle)
    if a is None:
        raise ValueError(f"{handle:#x} is not a CUDA array of this process")
    return a


@implements(RUNTIME_API, "cudaMalloc3DArray")
def malloc_3d_array(out: int, fmt: int, width: int, height: int, depth: int, flags: int, levels: int) -> int:
    if not out or flags & ~(FLAGS_KNOWN | TEXTURE_GATHER):
        return ERR_INVALID_VALUE
    arr = ca.create_array(rt.conn, format_of(fmt), width, height, depth, flags & FLAGS_KNOWN, levels)
    _arrays[arr.base] = arr
    hostmem.store_u64(out, arr.base)
    return SUCCESS


@implements(RUNTIME_API, "cudaGetMipmappedArrayLevel")
def get_mipmapped_array_level(out: int, handle: int, level: int) -> int:
    arr = _arrays.get(handle)
    if not out or arr is None or level >= len(arr.levels):
        return ERR_INVALID_VALUE
    sub = arr.level(level)
    key = sub.base | LEVEL_TAG
    _arrays[key] = sub
    hostmem.store_u64(out, key)
    return SUCCESS


@implements(RUNTIME_API, "cudaFreeArray")
def free_array(handle: int) -> int:
    if not handle:
        return SUCCESS
    if handle & LEVEL_TAG or handle not in _arrays:
        return ERR_INVALID_VALUE
    rt.drain()
    arr = _arrays.pop(handle)
    end = arr.base + arr.levels[-1].offset
    arr.free()
    for key in [k for k in _arrays if k & LEVEL_TAG and handle <= k & ~LEVEL_TAG <= end]:
        del _arrays[key]
    return SUCCESS


@implements(RUNTIME_API, "cudaGetChannelDesc")
def get_channel_desc(out: int, handle: int) -> int:
    hostmem.store_u64(out, format_word(array_of(handle).format))
    return SUCCESS


def _box(arr_handle: int, ptr: int, pitch: int, ysize: int, x: int, y: int, z: int, elements: bool):
    """(device box or None, host address or None) of one side of a copy."""
    if arr_handle:
        arr = array_of(arr_handle)
        xb = x * arr.format.element_size if elements else x
        return arr.box(xb, y, z), None, arr
    return None, (ptr, pitch, pitch * ysize, x + y * pitch + z * pitch * ysize), None


@implements(RUNTIME_API, "cudaMemcpy3D")
def memcpy_3d(d_arr: int, d_ptr: int, d_pitch: int, d_ysize: int, d_x: int, d_y: int, d_z: int,
              s_arr: int, s_ptr: int, s_pitch: int, s_ysize: int, s_x: int, s_y: int, s_z: int,
              width: int, height: int, depth: int, kind: int, stream: int, sync: int, units: int) -> int:
    elements = units == COPY_ELEMENTS
    dbox, dhost, darr = _box(d_arr, d_ptr, d_pitch, d_ysize, d_x, d_y, d_z, elements)
    sbox, shost, sarr = _box(s_arr, s_ptr, s_pitch, s_ysize, s_x, s_y, s_z, elements)
    arr = darr or sarr
    if elements and arr is not None:
        width *= arr.format.element_size
    height, depth = max(height, 1), max(depth, 1)
    if width == 0:
        return SUCCESS
    conn = rt.conn
    rt.drain()
    # a pointer side is host or device memory as the kind (or, for cudaMemcpyDefault, the address) says
    if dhost is not None and (kind == D2D or kind == H2D or kind == DEFAULT and rt.is_device(d_ptr)):
        ptr, pitch, slc, off = dhost
        dbox, dhost = ca.P.cr_box(base=ptr + off, pitch=pitch, slice=slc), None
    if shost is not None and (kind == D2D or kind == D2H or kind == DEFAULT and rt.is_device(s_ptr)):
        ptr, pitch, slc, off = shost
        sbox, shost = ca.P.cr_box(base=ptr + off, pitch=pitch, slice=slc), None
    if dhost is not None and shost is not None:
        return ERR_INVALID_VALUE                     # host to host has no array in it
    if shost is not None:
        ptr, pitch, slc, off = shost
        rows = b"".join(hostmem.read(ptr + off + z * slc + y * pitch, width)
                        for z in range(depth) for y in range(height))
        ca.copy_htod(conn, dbox, memoryview(rows), width, height, depth)
    elif dhost is not None:
        data = ca.copy_dtoh(conn, sbox, width, height, depth)
        ptr, pitch, slc, off = dhost
        k = 0
        for z in range(depth):
            for y in range(height):
                hostmem.write(ptr + off + z * slc + y * pitch, data[k:k + width])
                k += width
    else:
        ca.copy_dtod(conn, dbox, sbox, width, height, depth)
    return SUCCESS


def _floats(words) -> tuple[float, ...]:
    return struct.unpack(f"<{len(words)}f", struct.pack(f"<{len(words)}I", *words))


@implements(RUNTIME_API, "cudaCreateTextureObject")
def create_texture_object(out: int, words_at: int) -> int:
    return create_object_from_words(out, struct.unpack("<21Q", hostmem.read(words_at, 21 * 8)))


def create_object_from_words(out: int, w: tuple[int, ...]) -> int:
    """A texture (word 20 set) or surface object from the words forward_runtime.c flattens."""
    rtype = w[0]
    if rtype in (ca.RESOURCE_ARRAY, ca.RESOURCE_MIPMAPPED):
        res = ca.Resource(rtype, array=array_of(w[1]))
    elif rtype in (ca.RESOURCE_LINEAR, ca.RESOURCE_PITCH2D):
        res = ca.Resource(rtype, base=w[1], format=format_of(w[2]), width=w[3], height=w[4], pitch=w[5])
    else:
        return ERR_INVALID_VALUE
    if w[20]:
        b = _floats(w[12:16])
        lod = _floats(w[17:20])
        handle = ca.create_texture(rt.conn, res, ca.Sampling(tuple(w[6:9]), w[9], w[10], bool(w[11]), b, w[16],
                                                             lod[0], lod[1], lod[2]))
    else:
        handle = ca.create_surface(rt.conn, res)
    _objects[handle] = tuple(w[:6])
    hostmem.store_u64(out, handle)
    return SUCCESS


@implements(RUNTIME_API, "cudaDestroyTextureObject")
def destroy_texture_object(handle: int) -> int:
    if handle not in _objects:
        return ERR_INVALID_VALUE
    rt.drain()
    ca.destroy_object(rt.conn, handle)
    del _objects[handle]
    return SUCCESS


def resource_words(handle: int) -> tuple[int, ...]:
    """The resource words a texture or surface object of this process was made from."""
    words = _objects.get(handle)
    if words is None:
        raise ValueError(f"{handle:#x} is not a texture or surface object of this process")
    return words


@implements(RUNTIME_API, "cudaGetTextureObjectResourceDesc")
def get_texture_object_resource_desc(out: int, handle: int) -> int:
    hostmem.store_i64s(out, resource_words(handle))
    return SUCCESS


NAMES = ("cudaMalloc3DArray", "cudaGetMipmappedArrayLevel", "cudaFreeArray", "cudaGetChannelDesc", "cudaMemcpy3D",
         "cudaCreateTextureObject", "cudaDestroyTextureObject", "cudaGetTextureObjectResourceDesc")
