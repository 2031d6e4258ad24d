"""Textures, surfaces and the CUDA arrays under them, as the emulated kernel sees them.

A texture or surface object is a descriptor (``DESCRIPTOR``) that the backend writes into device
memory; its handle, the 64-bit value a kernel receives, is the descriptor's device address. The
instructions read the descriptor through the bounds-checked arena, so a forged or stale handle ends
the launch with CUDA_ERROR_ILLEGAL_ADDRESS and never reads outside the session's memory.

Fetching follows the CUDA programming guide's texture-fetching appendix: a normalized coordinate is
scaled by the size, nearest-point sampling takes texel ``floor(x)``, linear filtering blends the
texels around ``x - 0.5`` with weights held in 9-bit fixed point (8 fractional bits); the address
mode turns each out-of-range texel index into one inside (clamp, wrap, mirror) or into the border
colour. Surfaces are addressed in bytes along x and in rows/slices along y/z (PTX ``suld.b``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .atomics import atomic_apply
from .errors import CUDA_ERROR_ILLEGAL_ADDRESS, CUDA_ERROR_INVALID_VALUE, EmuError, not_supported
from .ptx.ast import Instr, Vec

MAGIC = 0x58455443          # "CTEX"
KIND_TEXTURE, KIND_SURFACE = 1, 2
RES_ARRAY, RES_LINEAR, RES_PITCH2D = 0, 1, 2
FMT_SIGNED, FMT_UNSIGNED, FMT_FLOAT = 0, 1, 2          # cudaChannelFormatKind values
ADDR_WRAP, ADDR_CLAMP, ADDR_MIRROR, ADDR_BORDER = 0, 1, 2, 3   # cudaTextureAddressMode values
FILTER_POINT, FILTER_LINEAR = 0, 1
MAX_LEVELS = 16

DESCRIPTOR = np.dtype([
    ("magic", "<u4"), ("kind", "<u4"), ("resource", "<u4"), ("channels", "<u4"), ("bits", "<u4"),
    ("format", "<u4"), ("layered", "<u4"), ("cubemap", "<u4"), ("dims", "<u4"),
    ("address", "<u4", 3), ("filter", "<u4"), ("read_normalized", "<u4"), ("normalized_coords", "<u4"),
    ("levels", "<u4"), ("mip_filter", "<u4"), ("min_lod", "<f4"), ("max_lod", "<f4"), ("lod_bias", "<f4"),
    ("border", "<f4", 4), ("pad", "<u4"),
    ("level_ptr", "<u8", MAX_LEVELS), ("level_pitch", "<u8", MAX_LEVELS), ("level_slice", "<u8", MAX_LEVELS),
    ("level_extent", "<u4", (MAX_LEVELS, 4)),          # width, height, depth, layers
])

_GEOMETRY = {"1d": (1, False), "2d": (2, False), "3d": (3, False), "a1d": (1, True), "a2d": (2, True),
             "cube": (3, False), "acube": (3, True)}


@dataclass(frozen=True)
class ChannelFormat:
    """cudaChannelFormatDesc reduced to what fetching needs: channels of equal width and one kind."""
    channels: int
    bits: int
    kind: int

    @property
    def element_size(self) -> int:
        return self.channels * self.bits // 8

    @classmethod
    def from_bits(cls, x: int, y: int, z: int, w: int, kind: int) -> "ChannelFormat":
        widths = [b for b in (x, y, z, w) if b]
        if not widths or any(b != widths[0] for b in widths) or widths[0] not in (8, 16, 32) \
                or len(widths) == 3 or kind not in (FMT_SIGNED, FMT_UNSIGNED, FMT_FLOAT) \
                or (kind == FMT_FLOAT and widths[0] == 8):
            raise EmuError(CUDA_ERROR_INVALID_VALUE, f"unsupported channel format ({x},{y},{z},{w}) kind {kind}")
        return cls(len(widths), widths[0], kind)


@dataclass(frozen=True)
class ArrayShape:
    """A CUDA array: width/height/depth in elements (0 = absent), layers, mipmap levels, cubemap."""
    width: int
    height: int = 0
    depth: int = 0
    layers: int = 0
    levels: int = 1
    cubemap: bool = False

    def level_extents(self) -> list[tuple[int, int, int, int]]:
        out = []
        w, h, d = self.width, max(self.height, 1), max(self.depth, 1)
        layers = max(self.layers, 1) * (6 if self.cubemap else 1)
        for _ in range(self.levels):
            out.append((w, h, d, layers))
            w, h, d = max(w // 2, 1), max(h // 2, 1), max(d // 2, 1)
        return out


@dataclass(frozen=True)
class LevelLayout:
    offset: int
    width: int
    height: int
    depth: int
    layers: int
    pitch: int
    slice: int


def array_layout(shape: ArrayShape, fmt: ChannelFormat) -> tuple[list[LevelLayout], int]:
    """Where each mipmap level of an array lies in its allocation, and the allocation's size."""
    if shape.width <= 0 or shape.levels < 1 or shape.levels > MAX_LEVELS:
        raise EmuError(CUDA_ERROR_INVALID_VALUE, f"bad array extent {shape}")
    levels, off = [], 0
    for w, h, d, layers in shape.level_extents():
        pitch = w * fmt.element_size
        sl = pitch * h
        levels.append(LevelLayout(off, w, h, d, layers, pitch, sl))
        off += (sl * d * layers + 255) // 256 * 256
    return levels, off


@dataclass(frozen=True)
class TextureSampling:
    """cudaTextureDesc: the fields the emulator honours (sRGB and anisotropy are ignored)."""
    address: tuple[int, int, int] = (ADDR_CLAMP, ADDR_CLAMP, ADDR_CLAMP)
    filter: int = FILTER_POINT
    read_normalized: bool = False
    normalized_coords: bool = False
    border: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)
    mip_filter: int = FILTER_POINT
    lod_bias: float = 0.0
    min_lod: float = 0.0
    max_lod: float = 0.0


def array_descriptor(kind: int, base: int, shape: ArrayShape, fmt: ChannelFormat,
                     sampling: TextureSampling | None = None) -> bytes:
    """Descriptor bytes of a texture (``sampling`` given) or surface over an array at ``base``."""
    levels, _ = array_layout(shape, fmt)
    d = _fill(kind, RES_ARRAY, fmt, sampling)
    d["layered"] = 1 if shape.layers else 0
    d["cubemap"] = 1 if shape.cubemap else 0
    d["dims"] = 3 if shape.depth else 2 if shape.height else 1
    d["levels"] = len(levels)
    for k, lv in enumerate(levels):
        d["level_ptr"][0, k] = base + lv.offset
        d["level_pitch"][0, k] = lv.pitch
        d["level_slice"][0, k] = lv.slice
        d["level_extent"][0, k] = (lv.width, lv.height, lv.depth, lv.layers)
    return d.tobytes()


def linear_descriptor(kind: int, base: int, fmt: ChannelFormat, width: int, height: int = 0, pitch: int = 0,
                      sampling: TextureSampling | None = None) -> bytes:
    """Descriptor bytes of a texture or surface over linear (height 0) or pitch-2D memory."""
    if width <= 0 or (height and pitch < width * fmt.element_size):
        raise EmuError(CUDA_ERROR_INVALID_VALUE, f"bad linear resource {width}x{height} pitch {pitch}")
    d = _fill(kind, RES_PITCH2D if height else RES_LINEAR, fmt, sampling)
    d["dims"] = 2 if height else 1
    d["levels"] = 1
    d["level_ptr"][0, 0] = base
    d["level_pitch"][0, 0] = pitch if height else width * fmt.element_size
    d["level_slice"][0, 0] = pitch * max(height, 1)
    d["level_extent"][0, 0] = (width, max(height, 1), 1, 1)
    return d.tobytes()


def _fill(kind: int, resource: int, fmt: ChannelFormat, s: TextureSampling | None) -> np.ndarray:
    d = np.zeros(1, DESCRIPTOR)
    d["magic"], d["kind"], d["resource"] = MAGIC, kind, resource
    d["channels"], d["bits"], d["format"] = fmt.channels, fmt.bits, fmt.kind
    if s is not None:
        if s.filter == FILTER_LINEAR and fmt.kind != FMT_FLOAT and not s.read_normalized:
            raise EmuError(CUDA_ERROR_INVALID_VALUE, "linear filtering needs a float result "
                           "(a float format or cudaReadModeNormalizedFloat)")
        d["address"] = s.address
        d["filter"], d["read_normalized"] = s.filter, int(s.read_normalized)
        d["normalized_coords"] = int(s.normalized_coords)
        d["border"] = s.border
        d["mip_filter"], d["lod_bias"], d["min_lod"], d["max_lod"] = s.mip_filter, s.lod_bias, s.min_lod, s.max_lod
    return d


# ---- kernel side ------------------------------------------------------------------------------
def _descriptor(X, handle: int, kind: int | None, what: str) -> np.void:
    idx = X.mem.check(np.uint64(handle), 8, 8)
    raw = X.mem.view(np.uint8)
    start = int(idx) * 8
    X.mem.check(np.uint64(handle + DESCRIPTOR.itemsize - 1), 1, 1)
    d = raw[start:start + DESCRIPTOR.itemsize].view(DESCRIPTOR)[0].copy()
    if int(d["magic"]) != MAGIC or (kind is not None and int(d["kind"]) != kind):
        raise EmuError(CUDA_ERROR_ILLEGAL_ADDRESS, f"{what}: {handle:#x} is not a live "
                       f"{'surface' if kind == KIND_SURFACE else 'texture'} object")
    if not _well_formed(d):      # a kernel may write anything into its own memory, magic included
        raise EmuError(CUDA_ERROR_ILLEGAL_ADDRESS, f"{what}: the object at {handle:#x} is corrupt")
    return d


def _well_formed(d) -> bool:
    levels = int(d["levels"])
    if not (1 <= levels <= MAX_LEVELS and int(d["channels"]) in (1, 2, 4) and int(d["bits"]) in (8, 16, 32)
            and int(d["format"]) in (FMT_SIGNED, FMT_UNSIGNED, FMT_FLOAT)
            and not (int(d["format"]) == FMT_FLOAT and int(d["bits"]) == 8)
            and all(int(m) <= ADDR_BORDER for m in d["address"])):
        return False
    ext = d["level_extent"][:levels]
    if (ext <= 0).any() or (ext > 1 << 16).any() or int(d["cubemap"]) and int(ext[0][3]) % 6:
        return False
    lod = np.array([d["lod_bias"], d["min_lod"], d["max_lod"], *d["border"]], np.float32)
    return bool(np.isfinite(lod[:3]).all())


def _groups(X, handle, L, mask):
    """(descriptor handle, lane positions) for each distinct handle among the lanes that run."""
    n = X._lane_count(L)
    run = np.ones(n, bool) if mask is True or mask is None else np.broadcast_to(np.asarray(mask, bool), (n,))
    h = np.broadcast_to(np.asarray(handle).astype(np.uint64), (n,))
    for v in np.unique(h[run]):
        yield int(v), np.nonzero(run & (h == v))[0]


def _lanes(x, pos):
    a = np.asarray(x)
    return a[pos] if a.ndim else np.broadcast_to(a, pos.shape)


def _channel_dtype(d) -> np.dtype:
    bits, fmt = int(d["bits"]), int(d["format"])
    if fmt == FMT_FLOAT:
        return np.dtype(np.float16 if bits == 16 else np.float32)
    return np.dtype(f"{'i' if fmt == FMT_SIGNED else 'u'}{bits // 8}")


def _texels(X, d, level: int, ix, iy, iz, inside) -> np.ndarray:
    """Raw channel values (lanes x channels) at integer texel indices; zero where not ``inside``."""
    ch = int(d["channels"])
    cdt = _channel_dtype(d)
    esz = ch * cdt.itemsize
    base = int(d["level_ptr"][level])
    addr = (np.uint64(base) + iz.astype(np.uint64) * np.uint64(d["level_slice"][level])
            + iy.astype(np.uint64) * np.uint64(d["level_pitch"][level])
            + ix.astype(np.uint64) * np.uint64(esz))
    out = np.zeros((len(addr), ch), cdt)
    if inside.any():
        a = addr[inside]
        idx = X.mem.check(a, cdt.itemsize, cdt.itemsize)
        X.mem.check(a + np.uint64(esz - cdt.itemsize), cdt.itemsize, cdt.itemsize)
        view = X.mem.view(cdt)
        out[inside] = np.stack([view[idx + k] for k in range(ch)], axis=1)
    return out


def _as_float(d, raw: np.ndarray) -> np.ndarray:
    """Channel values as float32, normalized per cudaReadModeNormalizedFloat where asked."""
    fmt, bits = int(d["format"]), int(d["bits"])
    v = raw.astype(np.float32)
    if fmt != FMT_FLOAT and int(d["read_normalized"]) and bits < 32:
        if fmt == FMT_UNSIGNED:
            v = v / np.float32((1 << bits) - 1)
        else:
            v = np.maximum(v / np.float32((1 << (bits - 1)) - 1), np.float32(-1.0))
    return v


def _address(i, n: int, mode: int):
    """Integer texel indices after the address mode, and where they are inside (False = border)."""
    i = i.astype(np.int64)
    if mode == ADDR_WRAP:
        return np.mod(i, n), np.ones(i.shape, bool)
    if mode == ADDR_MIRROR:
        m = np.mod(i, 2 * n)
        return np.where(m >= n, 2 * n - 1 - m, m), np.ones(i.shape, bool)
    if mode == ADDR_BORDER:
        inside = (i >= 0) & (i < n)
        return np.clip(i, 0, n - 1), inside
    return np.clip(i, 0, n - 1), np.ones(i.shape, bool)


def _finite(c) -> np.ndarray:
    """Float coordinates with NaN as 0 and infinities far outside any texture (2**30)."""
    return np.nan_to_num(np.asarray(c, np.float32), nan=0.0, posinf=2.0 ** 30, neginf=-2.0 ** 30)


def _weight(x):
    """The fractional part of a filtering coordinate in 9-bit fixed point with 8 fractional bits."""
    return (np.round((x - np.floor(x)) * 256.0) / 256.0).astype(np.float32)


def _face_axes(face, x, y, z):
    """(major axis, s, t) components of a vector on a cube face (the programming guide's table)."""
    return (np.choose(face, [x, -x, y, -y, z, -z]), np.choose(face, [-z, z, x, x, x, -x]),
            np.choose(face, [-y, -y, z, -z, -y, -y]))


def _cube_face(x, y, z):
    """(face, s, t) in [0,1] for a cubemap direction."""
    ax, ay, az = np.abs(x), np.abs(y), np.abs(z)
    face = np.where((ax >= ay) & (ax >= az), np.where(x >= 0, 0, 1),
                    np.where(ay >= az, np.where(y >= 0, 2, 3), np.where(z >= 0, 4, 5)))
    m, s, t = _face_axes(face, x, y, z)
    with np.errstate(divide="ignore", invalid="ignore"):
        return face, (s / m + 1) / 2, (t / m + 1) / 2


def _sample_level(X, d, level: int, coords: list, layer, integer: bool, out_float: bool):
    """Channel values (lanes x channels) of one mipmap level at the lanes' coordinates."""
    ext = d["level_extent"][level]
    sizes = [int(ext[0]), int(ext[1]), int(ext[2])][:len(coords)]
    modes = [int(m) for m in d["address"]]
    linear_mem = int(d["resource"]) == RES_LINEAR
    if not int(d["normalized_coords"]) or integer:
        modes = [ADDR_CLAMP if m in (ADDR_WRAP, ADDR_MIRROR) else m for m in modes]
    if linear_mem:
        modes = [ADDR_BORDER] * 3
    nlanes = len(np.asarray(coords[0]))
    iz_layer = np.zeros(nlanes, np.int64) if layer is None else layer
    if integer:
        u = [np.asarray(c).astype(np.int64) for c in coords]
        filt = False
    else:
        u = [_finite(c) * (np.float32(n) if int(d["normalized_coords"]) else np.float32(1))
             for c, n in zip(coords, sizes)]
        filt = int(d["filter"]) == FILTER_LINEAR
    if filt:
        base = [np.floor(c - np.float32(0.5)).astype(np.int64) for c in u]
        w = [_weight(c - np.float32(0.5)) for c in u]
        idx0 = base
    else:
        idx0 = u if integer else [np.floor(c).astype(np.int64) for c in u]
        w = None
    corners = [()]
    for _ in u:
        corners = [c + (k,) for c in corners for k in (0, 1)] if filt else [c + (0,) for c in corners]
    acc = None
    for corner in corners:
        idx, inside = [], np.ones(nlanes, bool)
        for k, (i0, n) in enumerate(zip(idx0, sizes)):
            i, ok = _address(i0 + corner[k], n, modes[k])
            idx.append(i)
            inside &= ok
        while len(idx) < 2:
            idx.append(np.zeros(nlanes, np.int64))
        z = idx[2] if len(idx) > 2 else iz_layer
        raw = _texels(X, d, level, idx[0], idx[1], z, inside)
        if not out_float and not filt:
            vals = raw
        else:
            vals = _as_float(d, raw)
        if not inside.all():
            border = np.asarray(d["border"][:vals.shape[1]], np.float32)
            vals = np.where(inside[:, None], vals, border.astype(vals.dtype))
        if not filt:
            return vals
        wt = np.ones(nlanes, np.float32)
        for k, c in enumerate(corner):
            wt = wt * (w[k] if c else np.float32(1) - w[k])
        acc = vals * wt[:, None] if acc is None else acc + vals * wt[:, None]
    return acc


def _finish(vals: np.ndarray, dtype: str, n: int) -> list[np.ndarray]:
    out = []
    for k in range(4):
        col = vals[:, k] if k < vals.shape[1] else np.zeros(n, vals.dtype)
        out.append(col.astype(np.float32) if dtype == "f32" else col.astype(np.int64).astype(
            np.int32 if dtype == "s32" else np.uint32))
    return out


def _lod_from_gradients(d, grad, pos, cube_dir=None) -> np.ndarray:
    """``tex.grad``'s level of detail: log2 of the longer of the two gradients in texels of level 0.

    Each gradient (d coords / dx, d coords / dy) is scaled by the texture's size where coordinates are
    normalized, as for OpenGL's ``textureGrad`` (scale factor rho = max(|dP/dx|, |dP/dy|)); a zero
    gradient selects the finest level. On a cubemap (``cube_dir`` the direction) the gradients of the
    direction become gradients of the face's s and t, d(s) = (d(sc) |ma| - sc d(|ma|)) / (2 ma^2), as
    OpenGL defines them. Anisotropic filtering is not emulated."""
    ext = d["level_extent"][0]
    scale = [np.float32(int(ext[k])) if int(d["normalized_coords"]) or cube_dir else np.float32(1)
             for k in range(3)]
    lengths = []
    for g in grad:
        comps = [_finite(_lanes(c, pos)).astype(np.float64) for c in g]
        if cube_dir is not None:
            p = [c.astype(np.float64) for c in cube_dir]
            face = _cube_face(*p)[0]
            m, sc, tc = _face_axes(face, *p)
            dm, dsc, dtc = _face_axes(face, *comps)
            with np.errstate(divide="ignore", invalid="ignore"):
                comps = [np.nan_to_num((dsc * m - sc * dm) / (2 * m * m)),
                         np.nan_to_num((dtc * m - tc * dm) / (2 * m * m))]
        sq = sum((c * np.float64(scale[k])) ** 2 for k, c in enumerate(comps))
        lengths.append(np.sqrt(sq))
    with np.errstate(divide="ignore"):
        return np.log2(np.maximum(*lengths)).astype(np.float32)


def tex_fetch(X, geom: str, handle, coords: list, L, mask, ctype: str, dtype: str, lod=None, layer=None,
              grad=None):
    """``tex.geom.v4.dtype.ctype``: four result vectors over the lanes of ``L`` (``lod`` for
    ``tex.level``, ``grad`` = (dPdx, dPdy) component lists for ``tex.grad``)."""
    n = X._lane_count(L)
    res = [np.zeros(n, np.float32 if dtype == "f32" else np.int32 if dtype == "s32" else np.uint32)
           for _ in range(4)]
    for h, pos in _groups(X, handle, L, mask):
        d = _descriptor(X, h, KIND_TEXTURE, "tex")
        cs = [np.asarray(_lanes(c, pos)) for c in coords]
        lay = None if layer is None else np.asarray(_lanes(layer, pos)).astype(np.int64)
        cube_dir = None
        if geom in ("cube", "acube"):
            cube_dir = cs
            face, s, t = _cube_face(*[c.astype(np.float32) for c in cs])
            cs = [s.astype(np.float32), t.astype(np.float32)]
            nl = int(d["level_extent"][0][3])
            lay = face + 6 * (np.clip(lay, 0, nl // 6 - 1) if lay is not None else 0)
        elif lay is not None:
            lay = np.clip(lay, 0, int(d["level_extent"][0][3]) - 1)
        integer = ctype == "s32"
        out_float = dtype == "f32"
        levels = int(d["levels"])
        if grad is not None:
            lod = _lod_from_gradients(d, grad, pos, cube_dir)
        if lod is None or levels == 1:
            vals = _sample_level(X, d, 0, cs, lay, integer, out_float)
        else:
            lv = np.clip(_finite(_lanes(lod, pos)) + np.float32(d["lod_bias"]),
                         np.float32(d["min_lod"]), min(np.float32(d["max_lod"]), np.float32(levels - 1)))
            lv = np.clip(lv, 0, levels - 1)
            if int(d["mip_filter"]) == FILTER_LINEAR:
                lo = np.floor(lv).astype(np.int64)
                f = (lv - lo).astype(np.float32)
                vals = None
                for k in np.unique(lo):
                    sel = lo == k
                    sub = [c[sel] for c in cs]
                    sl = None if lay is None else lay[sel]
                    a = _sample_level(X, d, int(k), sub, sl, integer, True)
                    b = _sample_level(X, d, min(int(k) + 1, levels - 1), sub, sl, integer, True)
                    v = a * (1 - f[sel])[:, None] + b * f[sel][:, None]
                    if vals is None:
                        vals = np.zeros((len(lv), v.shape[1]), np.float32)
                    vals[sel] = v
            else:
                near = np.floor(lv + np.float32(0.5)).astype(np.int64)
                vals = None
                for k in np.unique(near):
                    sel = near == k
                    v = _sample_level(X, d, int(k), [c[sel] for c in cs], None if lay is None else lay[sel],
                                      integer, out_float)
                    if vals is None:
                        vals = np.zeros((len(near), v.shape[1]), v.dtype)
                    vals[sel] = v
        for k, col in enumerate(_finish(vals, dtype, len(pos))):
            res[k][pos] = col
    return res


def tld4(X, comp: int, handle, coords: list, L, mask, dtype: str):
    """``tld4.comp.2d``: component ``comp`` of the bilinear footprint, counter-clockwise from lower left."""
    n = X._lane_count(L)
    res = [np.zeros(n, np.float32 if dtype == "f32" else np.int32 if dtype == "s32" else np.uint32)
           for _ in range(4)]
    for h, pos in _groups(X, handle, L, mask):
        d = _descriptor(X, h, KIND_TEXTURE, "tld4")
        ext = d["level_extent"][0]
        sizes = (int(ext[0]), int(ext[1]))
        norm = int(d["normalized_coords"])
        modes = [int(m) for m in d["address"][:2]]
        if not norm:
            modes = [ADDR_CLAMP if m in (ADDR_WRAP, ADDR_MIRROR) else m for m in modes]
        u = [_finite(_lanes(c, pos)) * (np.float32(s) if norm else np.float32(1)) for c, s in zip(coords, sizes)]
        i0 = [np.floor(c - np.float32(0.5)).astype(np.int64) for c in u]
        zero = np.zeros(len(pos), np.int64)
        for k, (dx, dy) in enumerate(((0, 1), (1, 1), (1, 0), (0, 0))):
            ix, okx = _address(i0[0] + dx, sizes[0], modes[0])
            iy, oky = _address(i0[1] + dy, sizes[1], modes[1])
            raw = _texels(X, d, 0, ix, iy, zero, okx & oky)
            vals = _as_float(d, raw) if dtype == "f32" else raw
            col = vals[:, comp] if comp < vals.shape[1] else np.zeros(len(pos), vals.dtype)
            inside = okx & oky
            if not inside.all() and comp < 4:
                col = np.where(inside, col, np.asarray(d["border"][comp]).astype(col.dtype))
            res[k][pos] = col.astype(res[k].dtype)
    return res


_TXQ = {"width": lambda d, lv: d["level_extent"][lv][0], "height": lambda d, lv: d["level_extent"][lv][1],
        "depth": lambda d, lv: d["level_extent"][lv][2],
        "array_size": lambda d, lv: d["level_extent"][0][3] // (6 if d["cubemap"] else 1) if d["layered"] else 1,
        "num_mipmap_levels": lambda d, lv: d["levels"], "normalized_coords": lambda d, lv: d["normalized_coords"],
        "filter_mode": lambda d, lv: d["filter"], "addr_mode_0": lambda d, lv: d["address"][0],
        "addr_mode_1": lambda d, lv: d["address"][1], "addr_mode_2": lambda d, lv: d["address"][2],
        "num_samples": lambda d, lv: 0}


def query(X, kind: int, what: str, handle, L, mask, level=None):
    """``txq``/``suq``: one attribute of each lane's texture or surface, as u32."""
    n = X._lane_count(L)
    out = np.zeros(n, np.uint32)
    for h, pos in _groups(X, handle, L, mask):
        d = _descriptor(X, h, kind, "txq" if kind == KIND_TEXTURE else "suq")
        if level is None:
            out[pos] = _TXQ[what](d, 0)
        else:
            lv = np.clip(np.asarray(_lanes(level, pos)).astype(np.int64), 0, int(d["levels"]) - 1)
            out[pos] = [_TXQ[what](d, int(k)) for k in lv]
    return out


def istypep(X, kind: int, handle, L, mask):
    """``istypep``: whether each lane's value is a live texture (or surface) object."""
    n = X._lane_count(L)
    out = np.zeros(n, bool)
    for h, pos in _groups(X, handle, L, mask):
        a = X.mem.allocation_of(h)
        if a is None or h % 8 or h + DESCRIPTOR.itemsize > a[0] + a[1]:
            continue
        try:
            out[pos] = int(_descriptor(X, h, kind, "istypep")["magic"]) == MAGIC
        except EmuError:
            pass
    return out


def _surface_addresses(X, d, coords, pos, size: int, oob: str, what: str):
    """Byte addresses of a surface access and which lanes are inside (x is a byte offset)."""
    ext = d["level_extent"][0]
    esz = int(d["channels"]) * int(d["bits"]) // 8
    bound = [int(ext[0]) * esz - size + 1, int(ext[1]), int(ext[3]) if int(d["layered"]) else int(ext[2])]
    c = [np.asarray(_lanes(v, pos)).astype(np.int64) for v in coords]
    inside = np.ones(len(pos), bool)
    for k, v in enumerate(c):
        inside &= (v >= 0) & (v < bound[k])
    if oob == "trap" and not inside.all():
        bad = [int(v[~inside][0]) for v in c]
        raise EmuError(CUDA_ERROR_ILLEGAL_ADDRESS, f"{what}: surface coordinate {bad} is out of range (.trap)")
    c = [np.clip(v, 0, max(bound[k] - 1, 0)) for k, v in enumerate(c)]
    while len(c) < 3:
        c.append(np.zeros(len(pos), np.int64))
    addr = (np.uint64(int(d["level_ptr"][0])) + c[2].astype(np.uint64) * np.uint64(int(d["level_slice"][0]))
            + c[1].astype(np.uint64) * np.uint64(int(d["level_pitch"][0])) + c[0].astype(np.uint64))
    return addr, inside


def suld(X, geom: str, handle, coords: list, L, mask, dt, nvec: int, oob: str):
    """``suld.b``: ``nvec`` raw values of type ``dt`` from each lane's surface location."""
    n = X._lane_count(L)
    res = [np.zeros(n, dt) for _ in range(nvec)]
    size = np.dtype(dt).itemsize
    for h, pos in _groups(X, handle, L, mask):
        d = _descriptor(X, h, KIND_SURFACE, "suld")
        addr, inside = _surface_addresses(X, d, _surface_coords(geom, coords), pos, size * nvec, oob, "suld")
        idx = X.mem.check(addr, size, size)
        X.mem.check(addr + np.uint64(size * (nvec - 1)), size, size)
        view = X.mem.view(dt)
        for k in range(nvec):
            v = view[idx + k]
            res[k][pos] = np.where(inside, v, 0) if oob == "zero" else v
    return res


def sust(X, geom: str, handle, coords: list, vals: list, L, mask, dt, oob: str, formatted: bool = False):
    """``sust.b`` (raw bytes) and ``sust.p`` (converted to the surface's format)."""
    for h, pos in _groups(X, handle, L, mask):
        d = _descriptor(X, h, KIND_SURFACE, "sust")
        sc = _surface_coords(geom, coords)
        if formatted:                  # x counts samples here, not bytes (PTX ISA, sust.p)
            cdt = _channel_dtype(d)
            ch = int(d["channels"])
            vs = [_formatted(d, np.asarray(_lanes(v, pos)), cdt) for v in vals[:ch]]
            w = cdt
            sc[0] = np.asarray(sc[0]).astype(np.int64) * (ch * cdt.itemsize)
        else:
            vs = [np.asarray(_lanes(v, pos)).astype(dt) for v in vals]
            w = np.dtype(dt)
        total = w.itemsize * len(vs)
        addr, inside = _surface_addresses(X, d, sc, pos, total, oob, "sust")
        keep = inside if oob == "zero" else np.ones(len(pos), bool)
        if not keep.any():
            continue
        a = addr[keep]
        idx = X.mem.check(a, w.itemsize, w.itemsize)
        X.mem.check(a + np.uint64(w.itemsize * (len(vs) - 1)), w.itemsize, w.itemsize)
        view = X.mem.view(w)
        for k, v in enumerate(vs):
            view[idx + k] = v[keep]


_SURED_TYPES = {"u32": "u4", "s32": "i4", "b32": "u4", "u64": "u8", "s64": "i8", "b64": "u8"}


def sured(X, geom: str, handle, coords: list, value, L, mask, op: str, ctype: str, oob: str,
          formatted: bool = False):
    """``sured.b``/``sured.p``: an atomic reduction (add, min, max, and, or) at each lane's surface
    location, applied in lane order where lanes share a location. ``.p`` counts x in samples and reads
    ``.b32``/``.b64`` as signed or unsigned by the surface's format (PTX ISA, sured)."""
    for h, pos in _groups(X, handle, L, mask):
        d = _descriptor(X, h, KIND_SURFACE, "sured")
        dt = np.dtype(_SURED_TYPES[ctype])
        sc = _surface_coords(geom, coords)
        if formatted:
            fmt = int(d["format"])
            if fmt == FMT_FLOAT or int(d["bits"]) * int(d["channels"]) < dt.itemsize * 8:
                raise EmuError(CUDA_ERROR_ILLEGAL_ADDRESS, f"sured.p.{ctype} on a surface of "
                               f"{int(d['channels'])}x{int(d['bits'])}-bit {'float' if fmt == FMT_FLOAT else 'integer'}"
                               " samples")
            dt = np.dtype(f"{'i' if fmt == FMT_SIGNED else 'u'}{dt.itemsize}")
            sc[0] = np.asarray(sc[0]).astype(np.int64) * (int(d["channels"]) * int(d["bits"]) // 8)
        addr, inside = _surface_addresses(X, d, sc, pos, dt.itemsize, oob, "sured")
        keep = inside if oob == "zero" else np.ones(len(pos), bool)
        if not keep.any():
            continue
        idx = X.mem.check(addr[keep], dt.itemsize, dt.itemsize)
        raw = np.asarray(_lanes(value, pos)).astype(f"u{dt.itemsize}").view(dt)[keep]
        atomic_apply(X.mem.view(dt), np.broadcast_to(np.asarray(idx, np.intp), raw.shape), op, raw, None, dt)


def _formatted(d, v: np.ndarray, cdt: np.dtype) -> np.ndarray:
    """A 32-bit source value converted to the surface's channel format (float or integer)."""
    fmt = int(d["format"])
    if fmt == FMT_FLOAT:
        return v.view(np.float32).astype(cdt) if v.dtype.itemsize == 4 else v.astype(cdt)
    iv = v.view(np.int32) if fmt == FMT_SIGNED else v.view(np.uint32)
    info = np.iinfo(cdt)
    return np.clip(iv.astype(np.int64), info.min, info.max).astype(cdt)


def _surface_coords(geom: str, coords: list) -> list:
    """Surface coordinates (x bytes, y, z): an array geometry puts the layer index first."""
    if geom in ("a1d", "a2d"):
        layer, rest = coords[0], list(coords[1:1 + (1 if geom == "a1d" else 2)])
        while len(rest) < 2:
            rest.append(0)
        return rest + [layer]
    return list(coords[:{"1d": 1, "2d": 2, "3d": 3}[geom]])


# ---- code generation ---------------------------------------------------------------------------
_ELEM = {"b8": "u1", "b16": "u2", "b32": "u4", "b64": "u8"}


def _vec_items(o) -> tuple:
    return tuple(o.items) if isinstance(o, Vec) else (o,)


class TextureEmitters:
    """Code generation for tex, tld4, txq, suld, sust, suq and istypep (mixin of the block code generator)."""

    def _coord_exprs(self, vec, ctype: str, geom: str) -> tuple[list[str], str | None]:
        items = list(vec.items) if isinstance(vec, Vec) else [vec]
        dims, arrayed = _GEOMETRY[geom]
        layer = None
        if arrayed:
            layer = self.src(items[0], "s32")
            items = items[1:]
        return [self.src(i, ctype) for i in items[:dims]], layer

    def op_tex(self, ins: Instr, idx: int) -> None:
        mods = [m for m in ins.mods if m not in ("v4", "v2", "base")]
        lod = grad = None
        if "grad" in mods:
            mods.remove("grad")
            dims = _GEOMETRY.get(mods[0], (0, False))[0]
            grad = "(" + "".join(
                "[" + ", ".join(self.src(c, "f32") for c in _vec_items(ins.operands[k])[:dims]) + "], "
                for k in (2, 3)) + ")"
        if "level" in mods:
            mods.remove("level")
            lod = self.src(ins.operands[2], "f32")
        geom, dtype, ctype = mods[0], mods[1], mods[2]
        if geom not in _GEOMETRY or len(ins.operands[1].items) != 2:
            raise not_supported(f"texture fetch `{ins.text() if hasattr(ins, 'text') else ins.op}`")
        handle = self.src(ins.operands[1].items[0], "u64")
        coords, layer = self._coord_exprs(ins.operands[1].items[1], ctype, geom)
        self.at(idx)
        r = self.new_tmp()
        self.emit(f"{r} = tex_fetch(X, {geom!r}, {handle}, [{', '.join(coords)}], L, {self.mask_expr()}, "
                  f"{ctype!r}, {dtype!r}, {lod or 'None'}, {layer or 'None'}, {grad or 'None'})")
        dests = ins.operands[0].items if isinstance(ins.operands[0], Vec) else (ins.operands[0],)
        for k, item in enumerate(dests):
            self.assign(item, f"{r}[{k}]", dtype)

    def op_tld4(self, ins: Instr, idx: int) -> None:
        comp = "rgba".index(ins.mods[0])
        dtype, ctype = ins.mods[-2], ins.mods[-1]
        if ins.mods[1] != "2d":
            raise not_supported(f"texture gather `tld4.{'.'.join(ins.mods)}`")
        handle = self.src(ins.operands[1].items[0], "u64")
        coords, _ = self._coord_exprs(ins.operands[1].items[1], ctype, "2d")
        self.at(idx)
        r = self.new_tmp()
        self.emit(f"{r} = tld4(X, {comp}, {handle}, [{', '.join(coords)}], L, {self.mask_expr()}, {dtype!r})")
        for k, item in enumerate(ins.operands[0].items):
            self.assign(item, f"{r}[{k}]", dtype)

    def _query(self, ins: Instr, idx: int, kind: int) -> None:
        mods = [m for m in ins.mods if m != "b32"]
        level = None
        if mods[0] == "level":
            mods = mods[1:]
            level = self.src(ins.operands[2], "s32")
        what = mods[0]
        if what not in _TXQ:
            raise not_supported(f"query `{ins.op}.{'.'.join(ins.mods)}`")
        a = ins.operands[1]
        handle = self.src(a.base if hasattr(a, "base") else a, "u64")
        self.at(idx)
        self.assign(ins.operands[0], f"tex_query(X, {kind}, {what!r}, {handle}, L, {self.mask_expr()}, "
                    f"{level or 'None'})", "u32")

    def op_txq(self, ins: Instr, idx: int) -> None:
        self._query(ins, idx, KIND_TEXTURE)

    def op_suq(self, ins: Instr, idx: int) -> None:
        self._query(ins, idx, KIND_SURFACE)

    def op_istypep(self, ins: Instr, idx: int) -> None:
        kind = {"texref": KIND_TEXTURE, "surfref": KIND_SURFACE}.get(ins.mods[0])
        if kind is None:
            raise not_supported(f"`istypep.{ins.mods[0]}`")
        handle = self.src(ins.operands[1], "u64")
        self.at(idx)
        self.assign(ins.operands[0], f"tex_istypep(X, {kind}, {handle}, L, {self.mask_expr()})", "pred")

    def _surface_parts(self, ins: Instr):
        mods = list(ins.mods)
        oob = next((m for m in mods if m in ("trap", "clamp", "zero")), "trap")
        nvec = next((int(m[1:]) for m in mods if m in ("v2", "v4")), 1)
        geom = next(m for m in mods if m in _GEOMETRY)
        t = next(m for m in mods if m in _ELEM)
        return mods[0], geom, t, nvec, oob

    def op_suld(self, ins: Instr, idx: int) -> None:
        form, geom, t, nvec, oob = self._surface_parts(ins)
        if form != "b":
            raise not_supported(f"formatted surface load `suld.{'.'.join(ins.mods)}`")
        grp = ins.operands[1]
        handle = self.src(grp.items[0], "u64")
        items = grp.items[1].items if isinstance(grp.items[1], Vec) else (grp.items[1],)
        coords = [self.src(i, "s32") for i in items]
        self.at(idx)
        r = self.new_tmp()
        self.emit(f"{r} = suld(X, {geom!r}, {handle}, [{', '.join(coords)}], L, {self.mask_expr()}, "
                  f"np.dtype({_ELEM[t]!r}), {nvec}, {oob!r})")
        dests = ins.operands[0].items if isinstance(ins.operands[0], Vec) else (ins.operands[0],)
        ut = "u" + t[1:]
        for k, item in enumerate(dests):
            self.assign(item, f"{r}[{k}]", ut)

    def op_sured(self, ins: Instr, idx: int) -> None:
        mods = list(ins.mods)
        op = next((m for m in mods if m in ("add", "min", "max", "and", "or")), None)
        ctype = next((m for m in mods if m in _SURED_TYPES), None)
        geom = next((m for m in mods if m in ("1d", "2d", "3d")), None)
        if mods[0] not in ("b", "p") or None in (op, ctype, geom):
            raise not_supported(f"surface reduction `sured.{'.'.join(mods)}`")
        oob = next((m for m in mods if m in ("trap", "clamp", "zero")), "trap")
        grp = ins.operands[0]
        handle = self.src(grp.items[0], "u64")
        coords = [self.src(i, "s32") for i in _vec_items(grp.items[1])]
        value = self.src(ins.operands[1], "u" + ctype[1:])
        self.at(idx)
        self.emit(f"sured(X, {geom!r}, {handle}, [{', '.join(coords)}], {value}, L, {self.mask_expr()}, "
                  f"{op!r}, {ctype!r}, {oob!r}, {mods[0] == 'p'})")

    def op_sust(self, ins: Instr, idx: int) -> None:
        form, geom, t, nvec, oob = self._surface_parts(ins)
        grp = ins.operands[0]
        handle = self.src(grp.items[0], "u64")
        items = grp.items[1].items if isinstance(grp.items[1], Vec) else (grp.items[1],)
        coords = [self.src(i, "s32") for i in items]
        srcs = ins.operands[1].items if isinstance(ins.operands[1], Vec) else (ins.operands[1],)
        ut = "u" + t[1:]
        vals = [self.src(s, ut) for s in srcs]
        self.at(idx)
        self.emit(f"sust(X, {geom!r}, {handle}, [{', '.join(coords)}], [{', '.join(vals)}], L, "
                  f"{self.mask_expr()}, np.dtype({_ELEM[t]!r}), {oob!r}, {form == 'p'})")


KERNEL_NAMES = {"tex_fetch": tex_fetch, "tld4": tld4, "tex_query": query, "tex_istypep": istypep,
                "suld": suld, "sust": sust, "sured": sured}
TEXTURE_OPS = {"tex", "tld4", "txq", "suq", "suld", "sust", "sured", "istypep"}


# ---- backend side: objects in device memory ---------------------------------------------------
def create_array(device, shape: ArrayShape, fmt: ChannelFormat) -> tuple[int, list[LevelLayout]]:
    """Allocate a CUDA array on an emu device: (device address, layout of its levels)."""
    levels, size = array_layout(shape, fmt)
    return device.mem_alloc(size), levels


def create_object(device, descriptor: bytes) -> int:
    """Place a texture or surface descriptor in device memory; the address is the object's handle."""
    handle = device.mem_alloc(len(descriptor))
    device.memcpy_htod(handle, descriptor)
    return handle


def destroy_object(device, handle: int) -> None:
    """Free a texture or surface object; a kernel using the handle afterwards faults."""
    device.memset_d8(handle, 0, 8)
    device.mem_free(handle)
