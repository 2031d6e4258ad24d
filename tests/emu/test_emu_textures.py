"""Textures and surfaces on emu: fetches, filtering, addressing, gathers, queries, surface load/store.

Every expected value is computed on the host from the programming guide's texture-fetching formulas
(nearest point: texel floor(x); linear: blend around x - 0.5 with 8-bit fractional weights).
"""
import math

import numpy as np
import pytest

from cricket.backends.emu import textures as tx
from cricket.backends.emu.errors import EmuError

F32 = tx.ChannelFormat(1, 32, tx.FMT_FLOAT)
F32x4 = tx.ChannelFormat(4, 32, tx.FMT_FLOAT)
U8x4 = tx.ChannelFormat(4, 8, tx.FMT_UNSIGNED)
S32 = tx.ChannelFormat(1, 32, tx.FMT_SIGNED)


@pytest.fixture
def run(make_runner):
    return make_runner()


def _array(r, shape, fmt, data):
    base, levels = tx.create_array(r.dev, shape, fmt)
    off = 0
    for lv, chunk in zip(levels, data):
        r.dev.memcpy_htod(base + lv.offset, np.ascontiguousarray(chunk))
        off += 1
    return base


def _texture(r, base, shape, fmt, **sampling):
    return tx.create_object(r.dev, tx.array_descriptor(tx.KIND_TEXTURE, base, shape, fmt,
                                                       tx.TextureSampling(**sampling)))


def _index(i, n, mode):
    if mode == "wrap":
        return i % n, True
    if mode == "mirror":
        m = i % (2 * n)
        return (2 * n - 1 - m if m >= n else m), True
    if mode == "border":
        return min(max(i, 0), n - 1), 0 <= i < n
    return min(max(i, 0), n - 1), True


def host_tex2d(img, x, y, mode, linear, normalized, border=0.0):
    """The guide's fetch of a 2D single-channel float texture, one point at a time in float64."""
    h, w = img.shape
    if normalized:
        x, y = x * w, y * h
    if not normalized and mode in ("wrap", "mirror"):
        mode = "clamp"

    def texel(i, j):
        i, ok1 = _index(i, w, mode)
        j, ok2 = _index(j, h, mode)
        return img[j, i] if ok1 and ok2 else border
    if not linear:
        return texel(math.floor(x), math.floor(y))
    xb, yb = x - 0.5, y - 0.5
    i, j = math.floor(xb), math.floor(yb)
    a = round((xb - i) * 256) / 256
    b = round((yb - j) * 256) / 256
    return ((1 - a) * (1 - b) * texel(i, j) + a * (1 - b) * texel(i + 1, j)
            + (1 - a) * b * texel(i, j + 1) + a * b * texel(i + 1, j + 1))


def _fetch(r, kernel, tex, xs, ys, ncomp=1):
    n = len(xs)
    out = r.zeros(n * ncomp, np.float32)
    r.launch(r.module("textures"), kernel, (1,), (n,), tex, out, r.put(np.float32(xs)), r.put(np.float32(ys)),
             np.int32(n))
    return r.get(out, n * ncomp, np.float32)


@pytest.mark.parametrize("mode", ["clamp", "wrap", "mirror", "border"])
@pytest.mark.parametrize("linear", [False, True])
def test_2d_fetch_matches_guide_formula(run, mode, linear):
    rng = np.random.default_rng(7)
    img = rng.uniform(-4, 4, (5, 7)).astype(np.float32)
    shape = tx.ArrayShape(7, 5)
    base = _array(run, shape, F32, [img])
    modes = {"wrap": tx.ADDR_WRAP, "clamp": tx.ADDR_CLAMP, "mirror": tx.ADDR_MIRROR, "border": tx.ADDR_BORDER}
    t = _texture(run, base, shape, F32, address=(modes[mode],) * 3, normalized_coords=True,
                 filter=tx.FILTER_LINEAR if linear else tx.FILTER_POINT, border=(2.5, 0, 0, 0))
    xs = rng.uniform(-1.5, 2.5, 96)
    ys = rng.uniform(-1.5, 2.5, 96)
    got = _fetch(run, "fetch2d_scalar", t, xs, ys)
    want = [host_tex2d(img, float(np.float32(x)), float(np.float32(y)), mode, linear, True, 2.5)
            for x, y in zip(xs, ys)]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_unnormalized_coordinates_treat_wrap_as_clamp(run):
    img = np.arange(12, dtype=np.float32).reshape(3, 4)
    shape = tx.ArrayShape(4, 3)
    t = _texture(run, _array(run, shape, F32, [img]), shape, F32, address=(tx.ADDR_WRAP,) * 3)
    got = _fetch(run, "fetch2d_scalar", t, [-3.0, 0.5, 3.9, 9.0], [0.2, 1.5, 2.2, 7.0])
    assert got.tolist() == [img[0, 0], img[1, 0], img[2, 3], img[2, 3]]


def test_linear_weights_are_quantized_to_eight_fractional_bits(run):
    img = np.array([[0.0, 1.0]], np.float32)
    shape = tx.ArrayShape(2, 1)
    t = _texture(run, _array(run, shape, F32, [img]), shape, F32, filter=tx.FILTER_LINEAR)
    x = 0.5 + 1 / 1000                          # a weight of 0.001 is 0 in 8-bit fixed point
    got = _fetch(run, "fetch2d_scalar", t, [x, 0.5 + 100 / 256], [0.5, 0.5])
    assert got.tolist() == [0.0, np.float32(100 / 256)]


def test_rgba8_reads_normalized_float(run):
    img = np.array([[[0, 51, 255, 128], [255, 0, 0, 1]]], np.uint8)
    shape = tx.ArrayShape(2, 1)
    t = _texture(run, _array(run, shape, U8x4, [img]), shape, U8x4, read_normalized=True)
    got = _fetch(run, "fetch2d", t, [0.5, 1.5], [0.5, 0.5], ncomp=4).reshape(2, 4)
    np.testing.assert_allclose(got, img[0].astype(np.float32) / 255, rtol=1e-6)


def test_linear_memory_fetch_is_zero_out_of_range(run):
    vals = np.arange(10, 20, dtype=np.int32)
    buf = run.put(vals)
    t = tx.create_object(run.dev, tx.linear_descriptor(tx.KIND_TEXTURE, buf, S32, 10,
                                                       sampling=tx.TextureSampling()))
    out = run.zeros(14, np.int32)
    run.launch(run.module("textures"), "fetch1d_linear", (1,), (14,), t, out, np.int32(14), np.int32(-2))
    assert run.get(out, 14, np.int32).tolist() == [0, 0] + vals.tolist() + [0, 0]


def test_3d_fetch_trilinear(run):
    rng = np.random.default_rng(3)
    vol = rng.uniform(0, 1, (3, 4, 5)).astype(np.float32)       # depth, height, width
    shape = tx.ArrayShape(5, 4, 3)
    t = _texture(run, _array(run, shape, F32, [vol]), shape, F32, filter=tx.FILTER_LINEAR)
    xs, ys, zs = rng.uniform(0, 5, 32), rng.uniform(0, 4, 32), rng.uniform(0, 3, 32)
    out = run.zeros(32, np.float32)
    run.launch(run.module("textures"), "fetch3d", (1,), (32,), t, out, run.put(np.float32(xs)),
               run.put(np.float32(ys)), run.put(np.float32(zs)), np.int32(32))

    def ref(x, y, z):
        c = [v - 0.5 for v in (x, y, z)]
        i = [math.floor(v) for v in c]
        w = [round((v - k) * 256) / 256 for v, k in zip(c, i)]
        total = 0.0
        for dz in (0, 1):
            for dy in (0, 1):
                for dx in (0, 1):
                    wt = (w[0] if dx else 1 - w[0]) * (w[1] if dy else 1 - w[1]) * (w[2] if dz else 1 - w[2])
                    total += wt * vol[min(max(i[2] + dz, 0), 2), min(max(i[1] + dy, 0), 3), min(max(i[0] + dx, 0), 4)]
        return total
    want = [ref(*map(float, map(np.float32, p))) for p in zip(xs, ys, zs)]
    np.testing.assert_allclose(run.get(out, 32, np.float32), want, rtol=1e-5, atol=1e-6)


def test_layered_fetch_reads_the_clamped_layer(run):
    layers = np.stack([np.full((2, 2), k + 1, np.float32) for k in range(3)])
    shape = tx.ArrayShape(2, 2, 0, layers=3)
    t = _texture(run, _array(run, shape, F32, [layers]), shape, F32)
    out = run.zeros(4, np.float32)
    run.launch(run.module("textures"), "fetch_layered", (1,), (4,), t, out, run.put(np.float32([0.5] * 4)),
               run.put(np.float32([1.5] * 4)), run.put(np.int32([0, 2, 1, 9])), np.int32(4))
    assert run.get(out, 4, np.float32).tolist() == [1.0, 3.0, 2.0, 3.0]


def test_mipmap_level_point_and_linear(run):
    shape = tx.ArrayShape(4, 4, levels=3)
    data = [np.full((4, 4), 10, np.float32), np.full((2, 2), 20, np.float32), np.full((1, 1), 40, np.float32)]
    base = _array(run, shape, F32, data)
    lods = np.float32([0, 0.4, 0.6, 1.25, 7])

    def go(mip):
        t = _texture(run, base, shape, F32, normalized_coords=True, mip_filter=mip, max_lod=10)
        out = run.zeros(5, np.float32)
        run.launch(run.module("textures"), "fetch_lod", (1,), (5,), t, out, run.put(np.float32([0.3] * 5)),
                   run.put(np.float32([0.6] * 5)), run.put(lods), np.int32(5))
        return run.get(out, 5, np.float32).tolist()
    assert go(tx.FILTER_POINT) == [10, 10, 20, 20, 40]
    np.testing.assert_allclose(go(tx.FILTER_LINEAR), [10, 14, 16, 25, 40], rtol=1e-6)


def test_gather_returns_footprint_counter_clockwise_from_lower_left(run):
    img = np.arange(16, dtype=np.float32).reshape(4, 4)
    rgba = np.stack([img * 0, img, img * 0, img * 0], axis=-1)      # component 1 holds the value
    shape = tx.ArrayShape(4, 4)
    t = _texture(run, _array(run, shape, F32x4, [rgba]), shape, F32x4)
    got = _fetch(run, "gather", t, [1.2], [2.3], ncomp=4)
    i, j = 0, 1                                                     # floor(1.2-0.5), floor(2.3-0.5)
    assert got.tolist() == [img[j + 1, i], img[j + 1, i + 1], img[j, i + 1], img[j, i]]


def test_surface_read_modify_write(run):
    w, h = 6, 3
    rng = np.random.default_rng(1)
    img = rng.integers(0, 200, (h, w, 4), dtype=np.uint8)
    shape = tx.ArrayShape(w, h)
    src = _array(run, shape, U8x4, [img])
    dst, _ = tx.create_array(run.dev, shape, U8x4)
    s_src = tx.create_object(run.dev, tx.array_descriptor(tx.KIND_SURFACE, src, shape, U8x4))
    s_dst = tx.create_object(run.dev, tx.array_descriptor(tx.KIND_SURFACE, dst, shape, U8x4))
    run.launch(run.module("textures"), "surf_bump", (1, h), (8,), s_src, s_dst, np.int32(w), np.int32(h))
    got = run.get(dst, w * h * 4, np.uint8).reshape(h, w, 4)
    want = img.copy()
    want[..., 0] += 1
    want[..., 3] = np.add.outer(np.arange(h), np.arange(w))
    assert (got == want).all()


def test_surface_boundary_modes(run):
    img = np.arange(6, dtype=np.float32).reshape(2, 3) + 1
    shape = tx.ArrayShape(3, 2)
    s = tx.create_object(run.dev, tx.array_descriptor(tx.KIND_SURFACE, _array(run, shape, F32, [img]), shape, F32))
    out = run.zeros(2, np.float32)
    run.launch(run.module("textures"), "surf_edges", (1,), (1,), s, out, np.int32(5), np.int32(1))
    assert run.get(out, 2, np.float32).tolist() == [0.0, 6.0]
    with pytest.raises(EmuError) as e:
        run.launch(run.module("textures"), "surf_trap", (1,), (1,), s, np.int32(3))
    assert e.value.code == 700


def test_queries_and_type_test(run):
    shape = tx.ArrayShape(9, 5, levels=2)
    base = _array(run, shape, F32, [np.zeros((5, 9), np.float32), np.zeros((2, 4), np.float32)])
    t = _texture(run, base, shape, F32, normalized_coords=True)
    s = tx.create_object(run.dev, tx.array_descriptor(tx.KIND_SURFACE, base, shape, F32))
    out = run.zeros(6, np.uint32)
    run.launch(run.module("textures"), "queries", (1,), (1,), t, s, out)
    assert run.get(out, 6, np.uint32).tolist() == [9, 5, 2, 9, 1, 0]


def test_destroyed_texture_faults(run):
    shape = tx.ArrayShape(2, 2)
    t = _texture(run, _array(run, shape, F32, [np.ones((2, 2), np.float32)]), shape, F32)
    tx.destroy_object(run.dev, t)
    with pytest.raises(EmuError) as e:
        _fetch(run, "fetch2d_scalar", t, [0.5], [0.5])
    assert e.value.code == 700


def _host_cube(faces, x, y, z):
    """The programming guide's cubemap table: face, then (s/m + 1)/2, (t/m + 1)/2, point sampled."""
    ax, ay, az = abs(x), abs(y), abs(z)
    if ax >= ay and ax >= az:
        face, m, s, t = (0, x, -z, -y) if x >= 0 else (1, -x, z, -y)
    elif ay >= az:
        face, m, s, t = (2, y, x, z) if y >= 0 else (3, -y, x, -z)
    else:
        face, m, s, t = (4, z, x, -y) if z >= 0 else (5, -z, -x, -y)
    n = faces.shape[1]
    u, v = (s / m + 1) / 2 * n, (t / m + 1) / 2 * n
    return faces[face, min(int(math.floor(v)), n - 1), min(int(math.floor(u)), n - 1)]


def test_cubemap_fetch_picks_face_and_texel(run):
    n = 4
    faces = np.arange(6 * n * n, dtype=np.float32).reshape(6, n, n)
    shape = tx.ArrayShape(n, n, 0, 1, cubemap=True)
    t = _texture(run, _array(run, shape, F32, [faces]), shape, F32, normalized_coords=True)
    rng = np.random.default_rng(5)
    dirs = rng.uniform(-1, 1, (64, 3)).astype(np.float32)
    out = run.zeros(64, np.float32)
    run.launch(run.module("textures"), "fetch_cube", (1,), (64,), t, out, *(run.put(dirs[:, k].copy()) for k in range(3)),
               np.int32(64))
    want = [_host_cube(faces, *map(float, d)) for d in dirs]
    assert run.get(out, 64, np.float32).tolist() == want


def test_formatted_surface_store_addresses_samples(run):
    # sust.p: x counts samples (not bytes), and the 32-bit sources are floats for a float format
    shape = tx.ArrayShape(3, 2)
    base = _array(run, shape, F32x4, [np.zeros((2, 3, 4), np.float32)])
    s = tx.create_object(run.dev, tx.array_descriptor(tx.KIND_SURFACE, base, shape, F32x4))
    run.launch(run.module("textures"), "surf_formatted", (1,), (1,), s, np.float32(2.5), np.int32(1), np.int32(1))
    got = run.get(base, 24, np.float32).reshape(2, 3, 4)
    assert got[1, 1].tolist() == [2.5] * 4 and np.count_nonzero(got) == 4


def test_a_descriptor_forged_by_a_kernel_faults(run):
    # a buffer that starts like a texture object but claims 99 mipmap levels
    shape = tx.ArrayShape(2, 2)
    good = np.frombuffer(tx.array_descriptor(tx.KIND_TEXTURE, 0, shape, F32, tx.TextureSampling()),
                         tx.DESCRIPTOR).copy()
    good["levels"] = 99
    forged = run.put(np.frombuffer(good.tobytes(), np.uint8))
    with pytest.raises(EmuError) as e:
        _fetch(run, "fetch2d_scalar", forged, [0.5], [0.5])
    assert e.value.code == 700 and "corrupt" in str(e.value)


def test_nan_and_infinite_coordinates_stay_inside(run):
    img = np.arange(6, dtype=np.float32).reshape(2, 3)
    shape = tx.ArrayShape(3, 2)
    t = _texture(run, _array(run, shape, F32, [img]), shape, F32, filter=tx.FILTER_LINEAR)
    got = _fetch(run, "fetch2d_scalar", t, [np.nan, np.inf, -np.inf], [0.5, np.inf, 0.5])
    assert got.tolist() == [img[0, 0], img[1, 2], img[0, 0]]
