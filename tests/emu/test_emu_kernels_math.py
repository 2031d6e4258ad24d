"""Math library code (inlined libdevice: fma, ex2/lg2, tables) and integer division (mathfn.cu, intops.cu)."""
import numpy as np
import pytest


def test_float_math_functions_within_a_few_ulp(two_batches, rng):
    n = 2048
    x = rng.uniform(-30, 30, n).astype(np.float32)
    x[:8] = [0.0, -0.0, 1.0, -1.0, 1e-30, 88.0, -88.0, 3.14159265]

    def body(r):
        m = r.module("mathfn")
        po = r.zeros(8 * n, np.float32)
        r.launch(m, "math_f32", (n // 256,), (256,), r.put(x), po, n)
        return {"o": r.get(po, 8 * n, np.float32).reshape(n, 8)}

    o = two_batches(body)["o"].astype(np.float64)
    xd = x.astype(np.float64)
    f32 = np.float32
    with np.errstate(all="ignore"):
        refs = {
            0: np.exp(xd),
            1: np.log((np.abs(x) + f32(1e-3)).astype(np.float64)),
            2: np.sin(xd),
            3: np.abs(xd) ** np.float64(f32(1.7)),
            4: np.sqrt(np.abs(xd)),
            5: np.tanh(xd),
            6: np.cos((x * f32(10)).astype(np.float64)),
        }
    for k, ref in refs.items():
        ok = np.isfinite(ref) & (np.abs(ref) < 3e38)
        err = np.abs(o[ok, k] - ref[ok])
        # a few float ulp of the result, or of 1 for results near zero (sin/log cancellation)
        tol = 4 * np.spacing(np.maximum(np.abs(ref[ok]), 1e-6).astype(np.float32)).astype(np.float64) + 1e-7
        assert (err <= tol).all(), (k, err.max())
    ref7 = (np.fmin(x, f32(0.25)) + np.floor(x) + f32(1) / (x * x + f32(1))).astype(np.float64)
    np.testing.assert_allclose(o[:, 7], ref7, rtol=1e-6, atol=1e-6)


def test_double_math_functions_within_two_ulp(two_batches, rng):
    n = 1024
    x = rng.uniform(-30, 30, n)

    def body(r):
        m = r.module("mathfn")
        po = r.zeros(6 * n, np.float64)
        r.launch(m, "math_f64", (n // 128,), (128,), r.put(x), po, n)
        return {"o": r.get(po, 6 * n, np.float64).reshape(n, 6)}

    o = two_batches(body)["o"]
    refs = [np.exp(x), np.log(np.abs(x) + 1e-3), np.sin(x), np.abs(x) ** 1.7, np.sqrt(np.abs(x))]
    for k, ref in enumerate(refs):
        ulp = np.abs(o[:, k] - ref) / np.spacing(np.abs(ref))
        assert ulp.max() <= 2, (k, ulp.max())
    np.testing.assert_allclose(o[:, 5], np.fmin(x, 0.25) + 1 / (x * x + 1), rtol=1e-14)


def _trunc_div(a, b):
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q)


@pytest.mark.parametrize("variant", ["sm75", "sm75G"])
def test_integer_division_and_modulo_with_negatives(two_batches, rng, variant):
    n = 1500
    a = rng.integers(-2**31, 2**31, n, dtype=np.int64).astype(np.int32)
    b = rng.integers(-1000, 1000, n, dtype=np.int32)
    b[b == 0] = 7
    a[:6] = [-7, 7, -7, 7, np.iinfo(np.int32).min, 100]
    b[:6] = [2, -2, -2, 2, -1, 1]

    def body(r):
        m = r.module("intops", variant)
        outs = [r.zeros(n, t) for t in (np.int32, np.int32, np.uint32, np.uint32, np.int64, np.int64)]
        r.launch(m, "intdiv", ((n + 255) // 256,), (256,), r.put(a), r.put(b), *outs, n)
        names = ["q", "r", "uq", "ur", "lq", "lr"]
        types = [np.int32, np.int32, np.uint32, np.uint32, np.int64, np.int64]
        return {k: r.get(p, n, t) for k, p, t in zip(names, outs, types)}

    out = two_batches(body)
    a64, b64 = a.astype(np.int64), b.astype(np.int64)
    q = _trunc_div(a64, b64)
    assert np.array_equal(out["q"], q.astype(np.int32))         # INT_MIN / -1 wraps to INT_MIN
    assert np.array_equal(out["r"], (a64 - q * b64).astype(np.int32))
    ua, ub = a.view(np.uint32).astype(np.uint64), b.view(np.uint32).astype(np.uint64)
    assert np.array_equal(out["uq"], (ua // ub).astype(np.uint32))
    assert np.array_equal(out["ur"], (ua % ub).astype(np.uint32))
    X = a64 * 100003
    lq = _trunc_div(X, b64)
    assert np.array_equal(out["lq"], lq)
    assert np.array_equal(out["lr"], X - lq * b64)
