"""Naive and shared-memory tiled matrix multiply (tests/emu/cuda/matmul.cu)."""
import numpy as np
import pytest


@pytest.mark.parametrize("variant", ["sm75", "sm75G"])
@pytest.mark.parametrize("kernel", ["matmul_naive", "matmul_tiled"])
def test_matmul_matches_numpy(two_batches, rng, variant, kernel):
    M, N, K = 45, 70, 53      # not multiples of the 16x16 tile: edge tiles are partly masked
    A = rng.standard_normal((M, K)).astype(np.float32)
    B = rng.standard_normal((K, N)).astype(np.float32)

    def body(r):
        m = r.module("matmul", variant)
        pc = r.zeros(M * N, np.float32)
        r.launch(m, kernel, ((N + 15) // 16, (M + 15) // 16), (16, 16), r.put(A), r.put(B), pc, M, N, K)
        return {"c": r.get(pc, M * N, np.float32).reshape(M, N)}

    out = two_batches(body)
    np.testing.assert_allclose(out["c"], A.astype(np.float64) @ B.astype(np.float64), rtol=1e-4, atol=1e-4)
