"""Constant memory, vector accesses, half precision, generic address-space queries (extras.cu)."""
import numpy as np
import pytest

VARIANTS = ["sm75", "sm75G"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_constant_memory_written_like_cudaMemcpyToSymbol(two_batches, rng, variant):
    n = 500
    x = rng.uniform(-2, 2, n).astype(np.float32)
    c = np.array([1.0, -0.5, 0.25, 2.0], np.float32)

    def body(r):
        m = r.module("extras", variant)
        ptr, size = m.get_global("coeffs")
        assert size == 16
        r.dev.memcpy_htod(ptr, c)
        py = r.zeros(n, np.float32)
        r.launch(m, "poly_const", ((n + 127) // 128,), (128,), r.put(x), py, n)
        return {"y": r.get(py, n, np.float32)}

    out = two_batches(body)
    ref = ((c[3] * x + c[2]) * x + c[1]) * x + c[0]
    np.testing.assert_allclose(out["y"], ref, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("variant", VARIANTS)
def test_vector_loads_and_stores(two_batches, rng, variant):
    n = 300
    v = rng.standard_normal((n, 4)).astype(np.float32)

    def body(r):
        m = r.module("extras", variant)
        po = r.zeros(4 * n, np.float32)
        r.launch(m, "float4_swap", ((n + 63) // 64,), (64,), r.put(v), po, n)
        return {"o": r.get(po, 4 * n, np.float32).reshape(n, 4)}

    out = two_batches(body)
    assert np.array_equal(out["o"], v[:, ::-1])


@pytest.mark.parametrize("variant", VARIANTS)
def test_half_precision_arithmetic(two_batches, rng, variant):
    n = 256
    a = rng.uniform(-100, 100, n).astype(np.float16)
    b = rng.uniform(-4, 4, n).astype(np.float16)

    def body(r):
        m = r.module("extras", variant)
        pc, pf = r.zeros(n, np.float16), r.zeros(n, np.float32)
        r.launch(m, "half_math", (2,), (128,), r.put(a), r.put(b), pc, pf, n)
        return {"c": r.get(pc, n, np.float16), "f": r.get(pf, n, np.float32)}

    out = two_batches(body)
    s = (a + b).astype(np.float16)
    assert np.array_equal(out["f"], s.astype(np.float32))
    assert np.array_equal(out["c"], (s * b).astype(np.float16))


@pytest.mark.parametrize("variant", VARIANTS)
def test_generic_pointers_know_their_space(two_batches, variant):
    def body(r):
        m = r.module("extras", variant)
        g = r.put(np.arange(1000, 1032, dtype=np.int32))
        po = r.zeros(4 * 32, np.int32)
        r.launch(m, "address_spaces", (1,), (32,), g, po)
        ptr, _ = m.get_global("counter")
        return {"o": r.get(po, 128, np.int32).reshape(32, 4), "counter": r.get(ptr, 1, np.uint64)}

    out = two_batches(body)
    t = np.arange(32)
    odd = (t & 1) == 1
    assert np.array_equal(out["o"][:, 0], (~odd).astype(np.int32))
    assert np.array_equal(out["o"][:, 1], odd.astype(np.int32))
    assert (out["o"][:, 2] == 1).all()
    assert np.array_equal(out["o"][:, 3], np.where(odd, t, 1000 + t) + t)
    assert out["counter"][0] == 101                 # initialised to 100; clock64 advanced


@pytest.mark.parametrize("variant", ["sm75", "sm80"])
def test_async_copies_to_shared_memory_and_group_sync(two_batches, rng, variant):
    n = 512
    x = rng.integers(-10**6, 10**6, n, dtype=np.int32)

    def body(r):
        m = r.module("pipeline", variant)
        po = r.zeros(n, np.int32)
        r.launch(m, "async_copy_reverse", (n // 128,), (128,), r.put(x), po)
        return {"o": r.get(po, n, np.int32)}

    out = two_batches(body)
    assert np.array_equal(out["o"], x.reshape(-1, 128)[:, ::-1].ravel())
