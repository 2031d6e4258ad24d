"""Reductions and scans: shared-memory trees, warp shuffles and votes (tests/emu/cuda/reduce.cu)."""
import numpy as np
import pytest

VARIANTS = ["sm75", "sm75G"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_block_reduce_with_dynamic_shared_memory(two_batches, rng, variant):
    n, bs = 20000, 256
    x = rng.random(n, dtype=np.float32)
    nb = (n + bs - 1) // bs

    def body(r):
        m = r.module("reduce", variant)
        po = r.zeros(nb, np.float32)
        r.launch(m, "block_reduce", (nb,), (bs,), r.put(x), po, n, shared=bs * 4)
        return {"sums": r.get(po, nb, np.float32)}

    out = two_batches(body)
    ref = np.pad(x, (0, nb * bs - n)).reshape(nb, bs).astype(np.float64).sum(axis=1)
    np.testing.assert_allclose(out["sums"], ref, rtol=1e-5)


@pytest.mark.parametrize("variant", VARIANTS)
def test_warp_shuffle_reduction_ballot_and_any(two_batches, rng, variant):
    n, bs = 4000, 128
    x = (rng.random(n, dtype=np.float32) - np.float32(0.05))
    nb = (n + bs - 1) // bs
    nw = nb * bs // 32

    def body(r):
        m = r.module("reduce", variant)
        pt, pb, pa = r.zeros(1, np.float32), r.zeros(nw, np.uint32), r.zeros(nw, np.int32)
        r.launch(m, "warp_reduce", (nb,), (bs,), r.put(x), pt, pb, pa, n)
        return {"total": r.get(pt, 1, np.float32), "ballot": r.get(pb, nw, np.uint32), "any": r.get(pa, nw, np.int32)}

    out = two_batches(body)
    xp = np.pad(x, (0, nw * 32 - n)).reshape(nw, 32)
    bits = ((xp > 0.5).astype(np.uint64) << np.arange(32, dtype=np.uint64)).sum(axis=1).astype(np.uint32)
    assert np.array_equal(out["ballot"], bits)
    assert np.array_equal(out["any"] != 0, (xp < 0).any(axis=1))
    np.testing.assert_allclose(out["total"][0], x.astype(np.float64).sum(), rtol=1e-5)


@pytest.mark.parametrize("variant", VARIANTS)
def test_block_scan_in_shared_memory(two_batches, rng, variant):
    n, bs = 3000, 256
    x = rng.integers(-50, 50, n, dtype=np.int32)
    nb = (n + bs - 1) // bs

    def body(r):
        m = r.module("reduce", variant)
        po, ps = r.zeros(n, np.int32), r.zeros(nb, np.int32)
        r.launch(m, "block_scan", (nb,), (bs,), r.put(x), po, ps, n, shared=bs * 4)
        return {"scan": r.get(po, n, np.int32), "sums": r.get(ps, nb, np.int32)}

    out = two_batches(body)
    xp = np.pad(x, (0, nb * bs - n)).reshape(nb, bs)
    assert np.array_equal(out["scan"], np.cumsum(xp, axis=1).ravel()[:n])
    assert np.array_equal(out["sums"], xp.sum(axis=1))


@pytest.mark.parametrize("variant", VARIANTS)
def test_warp_scan_with_shfl_up_xor_and_idx(two_batches, rng, variant):
    n, bs = 1000, 64
    x = rng.integers(-1000, 1000, n, dtype=np.int32)
    nb = (n + bs - 1) // bs
    nw = nb * bs // 32

    def body(r):
        m = r.module("reduce", variant)
        po, pm = r.zeros(2 * n, np.int32), r.zeros(nw, np.int32)
        r.launch(m, "warp_scan", (nb,), (bs,), r.put(x), po, pm, n)
        return {"o": r.get(po, 2 * n, np.int32).reshape(n, 2), "max": r.get(pm, nw, np.int32)}

    out = two_batches(body)
    xp = np.pad(x, (0, nw * 32 - n)).reshape(nw, 32)
    scan = np.cumsum(xp, axis=1)
    assert np.array_equal(out["o"][:, 0], scan.ravel()[:n])
    assert np.array_equal(out["o"][:, 1], scan[:, ::-1].ravel()[:n])
    xm = np.pad(x, (0, nw * 32 - n), constant_values=np.iinfo(np.int32).min).reshape(nw, 32)
    assert np.array_equal(out["max"], xm.max(axis=1))
