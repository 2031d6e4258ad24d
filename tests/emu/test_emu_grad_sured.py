"""tex.grad (level of detail from explicit gradients) and sured (surface reductions) on emu.

Expected values come from the host: the level of detail is log2 of the longer gradient measured in
texels of level 0 (OpenGL's textureGrad scale factor), clamped as for tex.level; a surface reduction
is the sequential sum/min/max/and/or of every lane's value at its location.
"""
import numpy as np
import pytest

from cricket.backends.emu import textures as tx
from cricket.backends.emu.errors import EmuError

F32, S32, U32, U32x2 = (tx.ChannelFormat(n, 32, kind) for n, kind in
                        ((1, tx.FMT_FLOAT), (1, tx.FMT_SIGNED), (1, tx.FMT_UNSIGNED), (2, tx.FMT_UNSIGNED)))


def _mipmapped(runner, rng, w, h, levels):
    shape = tx.ArrayShape(w, h, levels=levels)
    base, layout = tx.create_array(runner.dev, shape, F32)
    data = []
    for lv in layout:
        img = rng.uniform(-8, 8, (lv.height, lv.width)).astype(np.float32)
        runner.dev.memcpy_htod(base + lv.offset, img)
        data.append(img)
    return shape, base, data


def _host_point(img, x, y):
    h, w = img.shape
    return img[min(max(int(np.floor(y * h)), 0), h - 1), min(max(int(np.floor(x * w)), 0), w - 1)]


@pytest.mark.parametrize("mip", [tx.FILTER_POINT, tx.FILTER_LINEAR])
def test_tex_grad_2d_picks_the_level_of_the_longer_gradient(runner, mip):
    rng = np.random.default_rng(5)
    shape, base, data = _mipmapped(runner, rng, 32, 16, 5)
    t = tx.create_object(runner.dev, tx.array_descriptor(tx.KIND_TEXTURE, base, shape, F32, tx.TextureSampling(
        normalized_coords=True, mip_filter=mip, max_lod=3.5)))
    n = 64
    xs, ys = rng.uniform(0, 1, n).astype(np.float32), rng.uniform(0, 1, n).astype(np.float32)
    grads = (rng.uniform(-1, 1, (n, 4)) * 2.0 ** rng.integers(-8, 0, (n, 1))).astype(np.float32)
    grads[0] = 0                                   # no gradient: the finest level
    out = runner.zeros(n, np.float32)
    runner.launch(runner.module("grad_sured"), "fetch_grad2d", (1,), (n,), t, out, runner.put(xs), runner.put(ys),
               runner.put(grads), np.int32(n))
    got = runner.get(out, n, np.float32)
    want = []
    for x, y, g in zip(xs, ys, grads.astype(np.float64)):
        rho = max(np.hypot(g[0] * 32, g[1] * 16), np.hypot(g[2] * 32, g[3] * 16))
        lod = min(max(np.log2(rho) if rho else -np.inf, 0.0), 3.5)
        if mip == tx.FILTER_POINT:
            want.append(_host_point(data[int(np.floor(lod + 0.5))], x, y))
        else:
            lo = int(np.floor(lod))
            f = lod - lo
            want.append((1 - f) * _host_point(data[lo], x, y) + f * _host_point(data[min(lo + 1, 4)], x, y))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert got[0] == _host_point(data[0], xs[0], ys[0])


def test_tex_grad_1d_uses_the_absolute_gradient(runner):
    shape = tx.ArrayShape(16, levels=5)
    base, layout = tx.create_array(runner.dev, shape, F32)
    for k, lv in enumerate(layout):                 # level k holds the value k everywhere
        runner.dev.memcpy_htod(base + lv.offset, np.full(lv.width, k, np.float32))
    t = tx.create_object(runner.dev, tx.array_descriptor(tx.KIND_TEXTURE, base, shape, F32, tx.TextureSampling(
        normalized_coords=True, max_lod=10)))
    dx = np.float32([0, 1 / 16, -2 / 16, 4 / 16, 0, 1.0, 100.0])
    dy = np.float32([0, 0, 0, 1 / 16, -8 / 16, 0, 0])
    n = len(dx)
    out = runner.zeros(n, np.float32)
    runner.launch(runner.module("grad_sured"), "fetch_grad1d", (1,), (n,), t, out, runner.put(np.full(n, 0.3, np.float32)),
               runner.put(dx), runner.put(dy), np.int32(n))
    assert runner.get(out, n, np.float32).tolist() == [0, 0, 1, 2, 3, 4, 4]


def test_tex_grad_cube_projects_the_gradients_on_the_face(runner):
    w = 16
    shape = tx.ArrayShape(w, w, layers=1, levels=5, cubemap=True)
    base, layout = tx.create_array(runner.dev, shape, F32)
    for k, lv in enumerate(layout):                 # every face of level k holds the value k
        runner.dev.memcpy_htod(base + lv.offset, np.full((6, lv.height, lv.width), k, np.float32))
    t = tx.create_object(runner.dev, tx.array_descriptor(tx.KIND_TEXTURE, base, shape, F32, tx.TextureSampling(
        max_lod=10)))
    # On the +x face (x = 2) a gradient a along y moves t by a / (2 x): in texels a * w / (2 x);
    # along x, towards the face, it moves nothing (the point stays at the face's centre).
    a = np.float32([0, 4 / w, 8 / w, 16 / w, 64 / w, 2.0])
    want = [0, 0, 1, 2, 4, 0]
    n = len(a)
    dirs = np.tile(np.float32([2, 0, 0, 0]), (n, 1))
    dx = np.zeros((n, 4), np.float32)
    dx[:, 1] = a
    dx[-1] = [2.0, 0, 0, 0]
    out = runner.zeros(n, np.float32)
    runner.launch(runner.module("grad_sured"), "fetch_grad_cube", (1,), (n,), t, out, runner.put(dirs),
                  runner.put(dx), runner.put(np.zeros((n, 4), np.float32)), np.int32(n))
    assert runner.get(out, n, np.float32).tolist() == want


def _surface(runner, fmt, data, w, h=0):
    shape = tx.ArrayShape(w, h)
    base, _ = tx.create_array(runner.dev, shape, fmt)
    runner.dev.memcpy_htod(base, np.ascontiguousarray(data))
    return base, tx.create_object(runner.dev, tx.array_descriptor(tx.KIND_SURFACE, base, shape, fmt))


def test_sured_add_sums_colliding_lanes(runner):
    rng = np.random.default_rng(9)
    w, h, n = 5, 3, 1000
    start = rng.integers(-100, 100, (h, w)).astype(np.int32)
    base, s = _surface(runner, S32, start, w, h)
    xs, ys = rng.integers(0, w, n).astype(np.int32), rng.integers(0, h, n).astype(np.int32)
    vals = rng.integers(-1000, 1000, n).astype(np.int32)
    runner.launch(runner.module("grad_sured"), "sured_add2d", (4,), (256,), s, runner.put(xs), runner.put(ys), runner.put(vals),
               np.int32(n))
    want = start.astype(np.int64)
    np.add.at(want, (ys, xs), vals)
    assert (runner.get(base, w * h, np.int32).reshape(h, w) == want).all()


def test_sured_min_max_and_boundary_modes(runner):
    rng = np.random.default_rng(2)
    w, n = 8, 200
    start = rng.integers(-50, 50, w).astype(np.int32)
    base, s = _surface(runner, S32, start, w)
    xs = rng.integers(-2, w + 2, n).astype(np.int32)       # .clamp moves these in; .zero drops them
    vals = rng.integers(-1000, 1000, n).astype(np.int32)
    runner.launch(runner.module("grad_sured"), "sured_minmax1d", (1,), (n,), s, runner.put(xs), runner.put(vals), np.int32(n))
    # every lane runs sured.p.min at sample x (clamped) before any runs sured.b.max at x + 1 (.zero)
    got = runner.get(base, w, np.int32)
    want = start.astype(np.int64)
    np.minimum.at(want, np.clip(xs, 0, w - 1), vals)
    ok = (0 <= xs + 1) & (xs + 1 < w)
    np.maximum.at(want, xs[ok] + 1, vals[ok])
    assert (got == want).all()


def test_sured_bitwise_and_64_bit_add(runner):
    rng = np.random.default_rng(3)
    n = 64
    xs = rng.integers(0, 3, n).astype(np.int32) * 2          # or at 2k, and at 2k + 1
    vals = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    base, s = _surface(runner, U32, np.full(8, 0x0F0F0F0F, np.uint32), 8)
    runner.launch(runner.module("grad_sured"), "sured_bits", (1,), (n,), s, runner.put(xs), runner.put(vals), np.int32(n))
    want = np.full(8, 0x0F0F0F0F, np.uint32)
    np.bitwise_or.at(want, xs, vals)
    np.bitwise_and.at(want, xs + 1, ~vals)
    assert (runner.get(base, 8, np.uint32) == want).all()

    base, s = _surface(runner, U32x2, np.zeros(8, np.uint64), 4)
    big = rng.integers(1 << 60, 1 << 63, n, dtype=np.uint64)
    x64 = rng.integers(0, 4, n).astype(np.int32)
    runner.launch(runner.module("grad_sured"), "sured_add64", (1,), (n,), s, runner.put(x64), runner.put(big), np.int32(n))
    want64 = np.zeros(4, np.uint64)
    np.add.at(want64, x64, big)                              # wraps modulo 2**64, as the hardware
    assert (runner.get(base, 4, np.uint64) == want64).all()


def test_sured_trap_faults_out_of_range(runner):
    _, s = _surface(runner, S32, np.zeros((2, 2), np.int32), 2, 2)
    with pytest.raises(EmuError) as e:
        runner.launch(runner.module("grad_sured"), "sured_add2d", (1,), (1,), s, runner.put(np.int32([2])),
                   runner.put(np.int32([0])), runner.put(np.int32([1])), np.int32(1))
    assert e.value.code == 700
