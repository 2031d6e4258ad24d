"""The driver API's CUDA arrays, texture and surface objects (forwarded by cext/driver/arrays.c).

They share the runtime face's tables (``arrays_runtime``): a process holds one client state, so an
array made by ``cuArray3DCreate`` is a ``cudaArray_t`` too. Only the descriptors differ: formats
are ``CUarray_format`` with a channel count, and a texture reads integer data as normalized floats
unless ``CU_TRSF_READ_AS_INTEGER`` is set.
"""
from __future__ import annotations

import logging
import struct

from cricket.client import arrays as ca
from cricket.client import arrays_runtime as art
from cricket.client.driver_face import DRIVER_API
from cricket.client.faces import implements
from cricket.client.runtime import SUCCESS, hostmem

log = logging.getLogger(__name__)

# CUarray_format -> (bits per channel, cudaChannelFormatKind)
ARRAY_FORMATS = {0x01: (8, ca.FORMAT_UNSIGNED), 0x02: (16, ca.FORMAT_UNSIGNED), 0x03: (32, ca.FORMAT_UNSIGNED),
                 0x08: (8, ca.FORMAT_SIGNED), 0x09: (16, ca.FORMAT_SIGNED), 0x0A: (32, ca.FORMAT_SIGNED),
                 0x10: (16, ca.FORMAT_FLOAT), 0x20: (32, ca.FORMAT_FLOAT)}
TRSF_READ_AS_INTEGER, TRSF_NORMALIZED_COORDINATES = 0x01, 0x02


def _format_word(fmt: int, channels: int) -> int:
    """A CUarray_format and channel count as the runtime face's channel-format word."""
    if fmt not in ARRAY_FORMATS or channels not in (1, 2, 4):
        raise ValueError(f"CUarray_format {fmt:#x} with {channels} channels is not supported")
    bits, kind = ARRAY_FORMATS[fmt]
    word = 0
    for k in range(channels):
        word |= bits << (8 * k)
    return word | kind << 32


@implements(DRIVER_API, "cuArray3DCreate")
def array_3d_create(out: int, width: int, height: int, depth: int, fmt: int, channels: int, flags: int) -> int:
    return art.malloc_3d_array(out, _format_word(fmt, channels), width, height, depth, flags, 1)


@implements(DRIVER_API, "cuArrayDestroy")
def array_destroy(handle: int) -> int:
    if not handle:
        return art.ERR_INVALID_VALUE      # CUDA_ERROR_INVALID_VALUE has the same number
    return art.free_array(handle)


@implements(DRIVER_API, "cuMemcpy3D")
def memcpy_3d(d_arr: int, d_ptr: int, d_pitch: int, d_ysize: int, d_x: int, d_y: int, d_z: int,
              s_arr: int, s_ptr: int, s_pitch: int, s_ysize: int, s_x: int, s_y: int, s_z: int,
              width: int, height: int, depth: int, kind: int, stream: int, is_async: int) -> int:
    return art.memcpy_3d(d_arr, d_ptr, d_pitch, d_ysize, d_x, d_y, d_z, s_arr, s_ptr, s_pitch, s_ysize, s_x, s_y,
                         s_z, width, height, depth, kind, stream, int(not is_async), 0)


@implements(DRIVER_API, "cuTexObjectCreate")
def tex_object_create(out: int, words_at: int) -> int:
    w = list(struct.unpack("<21Q", hostmem.read(words_at, 21 * 8)))
    if w[0] in (ca.RESOURCE_LINEAR, ca.RESOURCE_PITCH2D):
        w[2] = _format_word(w[2] & 0xFFFFFFFF, w[2] >> 32)
    if w[20]:
        flags = w[10]
        w[10] = ca.READ_ELEMENT if flags & TRSF_READ_AS_INTEGER else ca.READ_NORMALIZED_FLOAT
        w[11] = 1 if flags & TRSF_NORMALIZED_COORDINATES else 0
    return art.create_object_from_words(out, tuple(w))


@implements(DRIVER_API, "cuTexObjectDestroy")
def tex_object_destroy(handle: int) -> int:
    return art.destroy_texture_object(handle)


@implements(DRIVER_API, "cuArray3DGetDescriptor")
def array_3d_get_descriptor(out: int, handle: int) -> int:
    arr = art.array_of(handle)
    fmt = _driver_format(art.format_word(arr.format))
    hostmem.store_i64s(out, (arr.width, arr.height, arr.depth, fmt & 0xFFFFFFFF, fmt >> 32, arr.flags))
    return SUCCESS


def _driver_format(word: int) -> int:
    """The runtime face's channel-format word as CUarray_format | channels << 32."""
    f = art.format_of(word)
    code = next(c for c, (b, k) in ARRAY_FORMATS.items() if b == f.x and k == f.kind)
    return code | sum(1 for b in (f.x, f.y, f.z, f.w) if b) << 32


@implements(DRIVER_API, "cuTexObjectGetResourceDesc")
def tex_object_get_resource_desc(out: int, handle: int) -> int:
    words = list(art.resource_words(handle))
    if words[0] in (ca.RESOURCE_LINEAR, ca.RESOURCE_PITCH2D):
        words[2] = _driver_format(words[2])
    hostmem.store_i64s(out, words)
    return SUCCESS
