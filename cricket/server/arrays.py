"""CUDA arrays, texture and surface objects, and strided (2D/3D) copies, kept per session.

An array is an allocation of the session laid out by the backend's texture support (levels of rows
and slices); a texture or surface object is a descriptor the backend places in the session's device
memory, and its address is the handle. Both count against the session's memory quota and go with
the session. Every length and extent from the client is checked before anything is allocated.
"""
from __future__ import annotations

import contextlib
import logging
import math
import weakref
from dataclasses import dataclass
from typing import Any

from ..backends.base import BackendError
from ..cudafacts import curesult
from .session import Session

log = logging.getLogger(__name__)

MAX_INLINE = 4194304                   # CRICKET_MAX_INLINE
MAX_EXTENT = 1 << 16                   # the largest array dimension a session may ask for
LAYERED, SURFACE_LDST, CUBEMAP = 1, 2, 4


@dataclass
class _SessionObjects:
    arrays: dict[int, Any]             # base -> (shape, format)
    objects: set[int]                  # texture and surface handles


_tables: "weakref.WeakKeyDictionary[Session, _SessionObjects]" = weakref.WeakKeyDictionary()


def _objects(session: Session) -> _SessionObjects:
    t = _tables.get(session)
    if t is None:
        t = _tables[session] = _SessionObjects({}, set())
    return t


def _invalid(msg: str) -> BackendError:
    return BackendError(curesult.INVALID_VALUE, msg)


def _support(session: Session) -> Any:
    textures = getattr(session.device, "textures", None)
    if textures is None:
        raise BackendError(curesult.NOT_SUPPORTED, f"the {session.backend.name} backend has no CUDA arrays, "
                           "textures or surfaces yet; use the emu backend")
    return textures()


@contextlib.contextmanager
def _backend_errors():
    """The backend's own validation errors (an EmuError carries a CUDA code) as BackendError."""
    try:
        yield
    except BackendError:
        raise
    except Exception as exc:
        code = getattr(exc, "code", None)
        if not isinstance(code, int):
            raise
        raise BackendError(code, str(exc)) from None


def _format(tx: Any, f: Any) -> Any:
    with _backend_errors():
        return tx.ChannelFormat.from_bits(f.x, f.y, f.z, f.w, f.kind)


def array_create(session: Session, service: Any, a: Any) -> tuple[int, list]:
    """cudaMalloc3DArray / cuArray3DCreate: (base, level layouts)."""
    tx = _support(session)
    fmt = _format(tx, a.format)
    if not (0 < a.width <= MAX_EXTENT and a.height <= MAX_EXTENT and a.depth <= MAX_EXTENT
            and 1 <= a.levels <= tx.MAX_LEVELS) or a.flags & ~(LAYERED | SURFACE_LDST | CUBEMAP):
        raise _invalid(f"array extent {a.width}x{a.height}x{a.depth}, {a.levels} levels, flags {a.flags:#x}")
    if a.flags & CUBEMAP:
        if a.width != a.height or a.depth == 0 or a.depth % 6:
            raise _invalid("a cubemap array is square with a depth of 6 times its layers")
        layers = a.depth // 6 if a.flags & LAYERED else 0
        shape = tx.ArrayShape(a.width, a.height, 0, layers, a.levels, True)
        if not layers:
            shape = tx.ArrayShape(a.width, a.height, 0, 1, a.levels, True)
    elif a.flags & LAYERED:
        if a.depth == 0:
            raise _invalid("a layered array needs at least one layer (depth)")
        shape = tx.ArrayShape(a.width, a.height, 0, a.depth, a.levels)
    else:
        if a.depth and not a.height:
            raise _invalid("a 3D array needs a height")
        shape = tx.ArrayShape(a.width, a.height, a.depth, 0, a.levels)
    with _backend_errors():
        levels, size = tx.array_layout(shape, fmt)
    base = service.mem_alloc(session, size)
    _objects(session).arrays[base] = (shape, fmt)
    log.debug("session %d: array %#x %s %s", session.id, base, shape, fmt)
    return base, levels


def array_destroy(session: Session, service: Any, base: int) -> None:
    arrays = _objects(session).arrays
    if base not in arrays:
        raise _invalid(f"{base:#x} is not a CUDA array of this session")
    service.mem_free(session, base)
    del arrays[base]


def _span(box: Any, width: int, height: int, depth: int) -> int:
    return (depth - 1) * box.slice + (height - 1) * box.pitch + width


def _check_copy(a: Any, boxes: tuple[str, ...]) -> None:
    if a.width == 0 or a.height == 0 or a.depth == 0:
        raise _invalid("an empty copy extent")
    for name in boxes:
        box = getattr(a, name)
        if a.height > 1 and box.pitch < a.width or a.depth > 1 and box.slice < box.pitch * a.height:
            raise _invalid(f"{name} pitch {box.pitch} / slice {box.slice} is smaller than a row / slice")


def memcpy_3d(session: Session, service: Any, a: Any) -> None:
    """Rows from the host (packed in ``data``) or from device memory to device memory."""
    _check_copy(a, ("dst",) if a.data else ("dst", "src"))
    service._ready(session)
    device, stream = session.device, session.stream(a.stream)
    session.allocations.check(a.dst.base, _span(a.dst, a.width, a.height, a.depth))
    if a.data:
        if len(a.data) != a.width * a.height * a.depth:
            raise _invalid(f"{len(a.data)} bytes for {a.depth} slices of {a.height} rows of {a.width}")
        view = memoryview(a.data)
    else:
        session.allocations.check(a.src.base, _span(a.src, a.width, a.height, a.depth))
    k = 0
    for z in range(a.depth):
        for y in range(a.height):
            dst = a.dst.base + z * a.dst.slice + y * a.dst.pitch
            if a.data:
                device.memcpy_htod(dst, view[k:k + a.width], stream)
                k += a.width
            else:
                device.memcpy_dtod(dst, a.src.base + z * a.src.slice + y * a.src.pitch, a.width, stream)


def memcpy_3d_dtoh(session: Session, service: Any, a: Any) -> bytes:
    """Rows of device memory packed tightly for the host."""
    _check_copy(a, ("src",))
    if a.width * a.height * a.depth > MAX_INLINE:
        raise _invalid(f"one copy carries at most {MAX_INLINE} bytes; split larger copies")
    service._ready(session)
    session.raise_async_error()
    session.allocations.check(a.src.base, _span(a.src, a.width, a.height, a.depth))
    device, stream = session.device, session.stream(a.stream)
    out = bytearray()
    for z in range(a.depth):
        for y in range(a.height):
            out += device.memcpy_dtoh(a.src.base + z * a.src.slice + y * a.src.pitch, a.width, stream)
    return bytes(out)


def texobj_create(session: Session, service: Any, a: Any) -> int:
    """cudaCreateTextureObject / cudaCreateSurfaceObject: the handle of a new descriptor."""
    tx = _support(session)
    kind = tx.KIND_SURFACE if a.surface else tx.KIND_TEXTURE
    sampling = None
    if not a.surface:
        if any(m not in (0, 1, 2, 3) for m in a.address) or a.filter not in (0, 1) or a.mip_filter not in (0, 1) \
                or a.read_mode not in (0, 1):
            raise _invalid("bad texture descriptor (address, filter or read mode)")
        if not all(math.isfinite(v) for v in (a.lod_bias, a.min_lod, a.max_lod, *a.border)):
            raise _invalid("a texture descriptor's mipmap levels and border colour must be finite")
        sampling = tx.TextureSampling(tuple(a.address), a.filter, bool(a.read_mode), bool(a.normalized),
                                      tuple(a.border), a.mip_filter, a.lod_bias, a.min_lod, a.max_lod)
    with _backend_errors():
        if a.resource == 0:
            entry = _objects(session).arrays.get(a.base)
            if entry is None:
                raise _invalid(f"{a.base:#x} is not a CUDA array of this session")
            session.allocations.check(a.base, tx.array_layout(entry[0], entry[1])[1])   # gone with a reset
            desc = tx.array_descriptor(kind, a.base, entry[0], entry[1], sampling)
        elif a.resource in (1, 2):
            fmt = _format(tx, a.format)
            if a.resource == 1:
                if a.width == 0 or a.width % fmt.element_size:
                    raise _invalid(f"linear size {a.width} is not a whole number of {fmt.element_size}-byte elements")
                session.allocations.check(a.base, a.width)
                desc = tx.linear_descriptor(kind, a.base, fmt, a.width // fmt.element_size, sampling=sampling)
            else:
                if not (0 < a.width <= MAX_EXTENT and 0 < a.height <= MAX_EXTENT):
                    raise _invalid(f"pitch 2D extent {a.width}x{a.height}")
                session.allocations.check(a.base, a.pitch * (a.height - 1) + a.width * fmt.element_size)
                desc = tx.linear_descriptor(kind, a.base, fmt, a.width, a.height, a.pitch, sampling)
        else:
            raise _invalid(f"resource type {a.resource}")
    handle = service.mem_alloc(session, len(desc))
    session.device.memcpy_htod(handle, desc)
    _objects(session).objects.add(handle)
    return handle


def texobj_destroy(session: Session, service: Any, handle: int) -> None:
    objects = _objects(session).objects
    if handle not in objects:
        raise _invalid(f"{handle:#x} is not a texture or surface object of this session")
    session.device.memset(handle, 0, 1, 8)
    service.mem_free(session, handle)
    objects.discard(handle)
