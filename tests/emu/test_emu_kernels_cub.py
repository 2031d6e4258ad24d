"""CUB block and warp primitives (library code from the CUDA toolkit) run unchanged (cub.cu)."""
import numpy as np
import pytest

VARIANTS = ["sm75", "sm90"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_cub_block_reduce_and_exclusive_scan(two_batches, rng, variant):
    nb = 6
    x = rng.integers(-1000, 1000, nb * 128, dtype=np.int32)

    def body(r):
        m = r.module("cub", variant)
        ps, pc = r.zeros(nb, np.int32), r.zeros(nb * 128, np.int32)
        r.launch(m, "cub_block_reduce_scan", (nb,), (128,), r.put(x), ps, pc)
        return {"sums": r.get(ps, nb, np.int32), "scan": r.get(pc, nb * 128, np.int32)}

    out = two_batches(body)
    xr = x.reshape(nb, 128)
    assert np.array_equal(out["sums"], xr.sum(axis=1))
    assert np.array_equal(out["scan"].reshape(nb, 128), np.cumsum(xr, axis=1) - xr)


@pytest.mark.parametrize("variant", VARIANTS)
def test_cub_block_radix_sort(two_batches, rng, variant):
    nb = 4
    keys = rng.integers(0, 2**32, nb * 512, dtype=np.uint32)
    keys[:100] = 7                                   # duplicates

    def body(r):
        m = r.module("cub", variant)
        po = r.zeros(nb * 512, np.uint32)
        r.launch(m, "cub_radix_sort", (nb,), (128,), r.put(keys), po)
        return {"sorted": r.get(po, nb * 512, np.uint32)}

    out = two_batches(body)
    assert np.array_equal(out["sorted"].reshape(nb, 512), np.sort(keys.reshape(nb, 512), axis=1))


@pytest.mark.parametrize("variant", VARIANTS)
def test_cub_warp_reduce_max(two_batches, rng, variant):
    nb = 5
    x = rng.standard_normal(nb * 128).astype(np.float32)

    def body(r):
        m = r.module("cub", variant)
        po = r.zeros(nb * 4, np.float32)
        r.launch(m, "cub_warp_max", (nb,), (128,), r.put(x), po)
        return {"max": r.get(po, nb * 4, np.float32)}

    out = two_batches(body)
    assert np.array_equal(out["max"], x.reshape(-1, 32).max(axis=1))
