"""Atomics: shared and global histograms and every atomic flavour (tests/emu/cuda/histogram.cu)."""
import numpy as np
import pytest

VARIANTS = ["sm75", "sm75G"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_shared_memory_histogram_of_bytes(two_batches, rng, variant):
    n = 30000
    data = rng.integers(0, 256, n, dtype=np.uint8)
    data[:3000] = 7                     # heavy contention on one bin

    def body(r):
        m = r.module("histogram", variant)
        ph = r.zeros(256, np.uint32)
        r.launch(m, "histogram_shared", (12,), (128,), r.put(data), ph, n)
        return {"h": r.get(ph, 256, np.uint32)}

    out = two_batches(body)
    assert np.array_equal(out["h"], np.bincount(data, minlength=256))


@pytest.mark.parametrize("variant", VARIANTS)
def test_global_histogram_with_negative_values(two_batches, rng, variant):
    n, nbins = 5000, 37
    data = rng.integers(-10000, 10000, n, dtype=np.int32)

    def body(r):
        m = r.module("histogram", variant)
        ph = r.zeros(nbins, np.uint32)
        r.launch(m, "histogram_global", ((n + 255) // 256,), (256,), r.put(data), ph, nbins, n)
        return {"h": r.get(ph, nbins, np.uint32)}

    out = two_batches(body)
    assert np.array_equal(out["h"], np.bincount(np.mod(data, nbins), minlength=nbins))


def test_every_atomic_flavour_gives_cuda_values(two_batches):
    nthreads = 200

    def body(r):
        m = r.module("histogram", "sm75")
        ctr = r.put(np.array([5], np.int32))
        umax = r.zeros(1, np.uint32)
        imin = r.put(np.array([1000], np.int32))
        dsum = r.zeros(1, np.float64)
        wrap = r.zeros(1, np.uint32)
        bits = r.put(np.array([0, 0xFFFFFFFF, 0], np.uint32))
        cas = r.put(np.array([-1], np.int32))
        tickets = r.zeros(nthreads, np.int32)
        r.launch(m, "atomics_mix", (2,), (100,), ctr, umax, imin, dsum, wrap, bits, cas, tickets)
        return {"ctr": r.get(ctr, 1, np.int32), "umax": r.get(umax, 1, np.uint32), "imin": r.get(imin, 1, np.int32),
                "dsum": r.get(dsum, 1, np.float64), "wrap": r.get(wrap, 1, np.uint32),
                "bits": r.get(bits, 3, np.uint32), "cas": r.get(cas, 1, np.int32),
                "tickets": r.get(tickets, nthreads, np.int32)}

    out = two_batches(body)
    i = np.arange(nthreads)
    assert out["ctr"][0] == 5 + nthreads
    assert sorted(out["tickets"]) == list(range(5, 5 + nthreads))     # every old value handed out once
    assert out["umax"][0] == (i * 7919 % 1000).max()
    assert out["imin"][0] == min(1000, (500 - i).min())
    assert out["dsum"][0] == (0.5 * i).sum()
    assert out["wrap"][0] == nthreads % 10                          # atomicInc wraps at 9 -> 0
    assert out["bits"][0] == 0xFFFFFFFF
    assert out["bits"][1] == 0
    assert out["bits"][2] == np.bitwise_xor.reduce(i.astype(np.uint32))
    # the CAS chain -1 -> 0 -> 1 ... advances as far as lane order allows
    assert out["cas"][0] == nthreads - 1
