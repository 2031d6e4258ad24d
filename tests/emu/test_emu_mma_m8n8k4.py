"""The sm_70 quad-pair ``mma.sync.aligned.m8n8k4`` with .f16 multiplicands: four 8x8x4 products per warp.

The kernels (tests/emu/cuda/mma_m8n8k4.cu) load and store fragments by the PTX ISA's tables; the
expected D = A B + C of each quad pair comes from NumPy. Inputs are small integers (and halves), so
every product and sum is exact in the accumulator type and the result is bit-exact.
"""
import numpy as np
import pytest

F16, F32 = np.float16, np.float32


def _inputs(rng, ctype):
    a = (rng.integers(-8, 9, (4, 8, 4)) * 0.5).astype(F16)
    b = rng.integers(-8, 9, (4, 4, 8)).astype(F16)
    c = rng.integers(-64, 65, (4, 8, 8)).astype(ctype)
    return a, b, c


def _run(runner, kernel, a, b, c, dtype, warps=1):
    d = runner.zeros(256, dtype)
    runner.launch(runner.module("mma_m8n8k4"), kernel, (1,), (32 * warps,), runner.put(a), runner.put(b),
                  runner.put(c), d)
    return runner.get(d, 256, dtype).reshape(4, 8, 8)


def _want(a, b, c, dtype):
    return (np.matmul(a.astype(np.float64), b.astype(np.float64)) + c.astype(np.float64)).astype(dtype)


@pytest.mark.parametrize("kernel", ["mma884_rr", "mma884_rc", "mma884_cr", "mma884_cc"])
def test_f32_accumulate_every_layout(runner, rng, kernel):
    a, b, c = _inputs(rng, F32)
    got = _run(runner, kernel, a, b, c, F32)
    assert np.array_equal(got, _want(a, b, c, F32))


@pytest.mark.parametrize("kernel,ctype,dtype", [("mma884_f16", F16, F16), ("mma884_f32_from_f16", F16, F32),
                                                ("mma884_f16_from_f32", F32, F16)])
def test_f16_accumulator_forms(runner, rng, kernel, ctype, dtype):
    a, b, c = _inputs(rng, ctype)
    got = _run(runner, kernel, a, b, c, dtype)
    assert np.array_equal(got, _want(a, b, c, dtype))


def test_quad_pairs_are_independent(runner, rng):
    """Only quad pair 2 gets non-zero A and B: the other three products are exactly their C."""
    a, b, c = _inputs(rng, F32)
    a[[0, 1, 3]] = 0
    b[[0, 1, 3]] = 0
    got = _run(runner, "mma884_rr", a, b, c, F32)
    assert np.array_equal(got[[0, 1, 3]], c[[0, 1, 3]])
    assert np.array_equal(got[2], _want(a, b, c, F32)[2])
