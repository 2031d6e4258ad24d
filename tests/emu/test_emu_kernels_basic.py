"""Data-parallel kernels from tests/emu/cuda/basic.cu against NumPy, at -O3 and -G."""
import numpy as np
import pytest

VARIANTS = ["sm75", "sm75G"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_vecadd_matches_numpy(two_batches, rng, variant):
    n = 5000
    a = rng.random(n, dtype=np.float32)
    b = rng.random(n, dtype=np.float32)

    def body(r):
        m = r.module("basic", variant)
        pc = r.zeros(n, np.float32)
        r.launch(m, "vecadd", ((n + 255) // 256,), (256,), r.put(a), r.put(b), pc, n)
        return {"c": r.get(pc, n, np.float32)}

    out = two_batches(body)
    assert np.array_equal(out["c"], a + b)


@pytest.mark.parametrize("variant", VARIANTS)
def test_saxpy_and_daxpy_match_numpy(two_batches, rng, variant):
    n = 3000
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    xd = rng.standard_normal(n)
    yd = rng.standard_normal(n)

    def body(r):
        m = r.module("basic", variant)
        py = r.put(y)
        r.launch(m, "saxpy", ((n + 127) // 128,), (128,), n, 2.5, r.put(x), py)
        pyd = r.put(yd)
        r.launch(m, "daxpy", ((n + 127) // 128,), (128,), n, -1.25, r.put(xd), pyd)
        return {"y": r.get(py, n, np.float32), "yd": r.get(pyd, n, np.float64)}

    out = two_batches(body)
    # a*x+y may be one fma on the GPU; the emulator executes whatever the PTX says, exactly
    np.testing.assert_allclose(out["y"], np.float32(2.5) * x + y, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(out["yd"], -1.25 * xd + yd, rtol=1e-15, atol=1e-15)


@pytest.mark.parametrize("variant", VARIANTS)
def test_grid_stride_loop_covers_every_element(two_batches, rng, variant):
    n = 10007
    inp = rng.integers(-1000, 1000, n, dtype=np.int32)

    def body(r):
        m = r.module("basic", variant)
        po = r.zeros(n, np.int64)
        r.launch(m, "grid_stride_scale", (7,), (96,), n, r.put(inp), po, -3)
        return {"o": r.get(po, n, np.int64)}

    out = two_batches(body)
    assert np.array_equal(out["o"], inp.astype(np.int64) * -3 + np.arange(n))


def _index3d_reference(grid, block, seed):
    gx, gy, gz = grid
    bx, by, bz = block
    nx, ny = bx * gx, by * gy
    out = np.zeros((gx * bx * gy * by * gz * bz, 4), np.uint32)
    z, y, x = np.meshgrid(np.arange(gz * bz), np.arange(gy * by), np.arange(gx * bx), indexing="ij")
    idx = ((z * ny + y) * nx + x).astype(np.uint64).ravel()
    tx = (x % bx).ravel().astype(np.int64)
    ty = (y % by).ravel().astype(np.int64)
    local = [((idx * 2654435761) & 0xFFFFFFFF) ^ ((seed + k) & 0xFFFFFFFF) for k in range(8)]
    local = np.stack(local)
    v = (local[(idx & 7).astype(int), np.arange(len(idx))] + local[((idx >> 3) & 7).astype(int), np.arange(len(idx))]) \
        & 0xFFFFFFFF
    v = v.astype(np.uint64)
    popc = np.array([bin(int(t)).count("1") for t in v])
    clz = np.array([32 - int(t).bit_length() for t in v])
    brev = np.array([int(f"{int(t):032b}"[::-1], 2) for t in v])
    m = np.minimum(v, 1000000)
    mm = np.minimum(tx - ty, 7)
    last = np.maximum(m.astype(np.int64), mm & 0xFFFFFFFF)
    out[idx.astype(int), 0] = popc
    out[idx.astype(int), 1] = clz
    out[idx.astype(int), 2] = brev
    out[idx.astype(int), 3] = last   # unsigned max: a negative tx-ty wraps to a large value
    return out.ravel()


@pytest.mark.parametrize("variant", VARIANTS)
def test_3d_indices_local_array_and_bit_intrinsics(two_batches, variant):
    grid, block = (3, 2, 2), (8, 4, 2)
    n = 3 * 2 * 2 * 8 * 4 * 2

    def body(r):
        m = r.module("basic", variant)
        po = r.zeros(4 * n, np.uint32)
        r.launch(m, "index3d", grid, block, po, 12345)
        return {"o": r.get(po, 4 * n, np.uint32)}

    out = two_batches(body)
    assert np.array_equal(out["o"], _index3d_reference(grid, block, 12345))
