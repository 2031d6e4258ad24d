"""mma.sync, ldmatrix and movmatrix (cuda/mma_sync.cu: inline PTX, sm_80) against NumPy.

The kernels place each element with the PTX ISA's fragment layouts, so a wrong layout in the
emulator shows as a wrong product. Integer, f64 and small-integer float cases are exact and
compared bit for bit; random floats get a tolerance, as the order of the tensor core's additions
is unspecified.
"""
from __future__ import annotations

import numpy as np
import pytest

from cricket.backends.emu.errors import EmuError

ITEMS, GRID, BLOCK = 4, (2,), (64,)

# kernel: (M, N, K, multiplicand types (A, B), accumulator type, .satfinite)
MMA = {
    "mma_m16n8k16_f16_f32": (16, 8, 16, ("f16", "f16"), "f32", False),
    "mma_m16n8k8_f16_f32": (16, 8, 8, ("f16", "f16"), "f32", False),
    "mma_m16n8k16_bf16_f32": (16, 8, 16, ("bf16", "bf16"), "f32", False),
    "mma_m16n8k8_bf16_f32": (16, 8, 8, ("bf16", "bf16"), "f32", False),
    "mma_m16n8k16_f16_f16": (16, 8, 16, ("f16", "f16"), "f16", False),
    "mma_m16n8k4_tf32": (16, 8, 4, ("tf32", "tf32"), "f32", False),
    "mma_m16n8k8_tf32": (16, 8, 8, ("tf32", "tf32"), "f32", False),
    "mma_m8n8k4_f64": (8, 8, 4, ("f64", "f64"), "f64", False),
    "mma_m16n8k16_s8": (16, 8, 16, ("s8", "s8"), "s32", False),
    "mma_m16n8k16_u8": (16, 8, 16, ("u8", "u8"), "s32", False),
    "mma_m16n8k32_s8_satfinite": (16, 8, 32, ("s8", "s8"), "s32", True),
    "mma_m16n8k32_u8_s8": (16, 8, 32, ("u8", "s8"), "s32", False),
}
HOST = {"f16": np.float16, "bf16": np.uint16, "tf32": np.float32, "f32": np.float32, "f64": np.float64,
        "s8": np.uint8, "u8": np.uint8, "s32": np.int32}


def encode(x: np.ndarray, etype: str) -> np.ndarray:
    if etype == "bf16":
        bits = x.astype(np.float32).view(np.uint32)
        assert not (bits & 0xFFFF).any()
        return (bits >> 16).astype(np.uint16)
    if etype == "s8":
        return x.astype(np.int8).view(np.uint8)
    return x.astype(HOST[etype])


def run_mma(two_batches, kernel: str, a, b, c) -> np.ndarray:
    m, n, k, (at, bt), ct, _ = MMA[kernel]

    def body(r):
        mod = r.module("mma_sync", "sm80")
        pd = r.zeros(ITEMS * m * n, HOST[ct])
        r.launch(mod, kernel, GRID, BLOCK, r.put(encode(a, at)), r.put(encode(b, bt)), r.put(c.astype(HOST[ct])), pd)
        return {"d": r.get(pd, ITEMS * m * n, HOST[ct])}
    return two_batches(body)["d"].reshape(ITEMS, m, n)


@pytest.mark.parametrize("kernel", sorted(MMA))
def test_mma_sync_exact_sums_match_numpy_bit_for_bit(kernel, matrix_values, two_batches):
    m, n, k, (at, bt), ct, sat = MMA[kernel]
    a, b = matrix_values((ITEMS, m, k), at), matrix_values((ITEMS, k, n), bt)
    c = matrix_values((ITEMS, m, n), ct)
    d = run_mma(two_batches, kernel, a, b, c)
    exact = np.matmul(a, b) + c
    if ct == "s32":     # 32-bit two's complement wraps; .satfinite clamps
        exact = np.clip(exact, -2 ** 31, 2 ** 31 - 1) if sat else (exact.astype(np.int64) + 2 ** 31) % 2 ** 32 - 2 ** 31
    assert np.array_equal(d, exact.astype(HOST[ct]))


def test_mma_sync_s32_accumulator_wraps_and_satfinite_clamps(rng, two_batches):
    """C near the top of the .s32 range: the plain form wraps around, .satfinite stops at INT_MAX."""
    a = np.full((ITEMS, 16, 32), 127.0)
    b = np.full((ITEMS, 32, 8), 127.0)
    c = np.full((ITEMS, 16, 8), 2.0 ** 31 - 1000)
    d = run_mma(two_batches, "mma_m16n8k32_s8_satfinite", a, b, c)
    assert (d == 2 ** 31 - 1).all()
    d = run_mma(two_batches, "mma_m16n8k32_u8_s8", a, b, c)
    assert (d == np.int64(2 ** 31 - 1000 + 32 * 127 * 127 - 2 ** 32)).all()


@pytest.mark.parametrize("kernel", [k for k, v in MMA.items() if v[3][0] in ("f16", "bf16", "tf32")])
def test_mma_sync_random_floats_within_accumulator_rounding(kernel, rng, two_batches):
    m, n, k, (at, _), ct, _ = MMA[kernel]
    a, b = rng.standard_normal((ITEMS, m, k)), rng.standard_normal((ITEMS, k, n))
    if at == "f16":
        a, b = (x.astype(np.float16).astype(np.float64) for x in (a, b))
    else:   # bf16 keeps 7 mantissa bits, tf32 10: truncate to make the inputs exact
        keep = np.uint32(0xFFFF0000 if at == "bf16" else 0xFFFFE000)
        a, b = ((x.astype(np.float32).view(np.uint32) & keep).view(np.float32).astype(np.float64) for x in (a, b))
    c = rng.standard_normal((ITEMS, m, n)).astype(HOST[ct]).astype(np.float64)
    d = run_mma(two_batches, kernel, a, b, c).astype(np.float64)
    bound = (k + 1) * np.finfo(HOST[ct]).eps * (np.matmul(np.abs(a), np.abs(b)) + np.abs(c))
    assert (np.abs(d - (np.matmul(a, b) + c)) <= bound).all()


# ---- ldmatrix / movmatrix ----------------------------------------------------------------------
def fragment_of(mat: np.ndarray) -> np.ndarray:
    """The ISA's 8x8 .b16 fragment: lane l holds row l / 4, columns 2 (l % 4) (low half) and +1."""
    lane = np.arange(32)
    lo = mat[lane // 4, 2 * (lane % 4)].astype(np.uint32)
    hi = mat[lane // 4, 2 * (lane % 4) + 1].astype(np.uint32)
    return lo | hi << 16


@pytest.mark.parametrize("num", [1, 2, 4])
@pytest.mark.parametrize("trans", [False, True])
def test_ldmatrix_gives_each_lane_its_fragment(num, trans, rng, two_batches):
    mats = rng.integers(0, 1 << 16, (ITEMS, num, 8, 8)).astype(np.uint16)
    kernel = f"ldmatrix_x{num}" + ("_trans" if trans else "")

    def body(r):
        mod = r.module("mma_sync", "sm80")
        po = r.zeros(ITEMS * 32 * num, np.uint32)
        r.launch(mod, kernel, GRID, BLOCK, r.put(mats), po)
        return {"out": r.get(po, ITEMS * 32 * num, np.uint32)}
    out = two_batches(body)["out"].reshape(ITEMS, 32, num)
    for w in range(ITEMS):
        for i in range(num):
            m = mats[w, i].T if trans else mats[w, i]
            assert np.array_equal(out[w, :, i], fragment_of(m)), (w, i)


def test_movmatrix_transposes_the_fragment(runner, rng):
    mats = rng.integers(0, 1 << 16, (ITEMS, 8, 8)).astype(np.uint16)
    frags = np.concatenate([fragment_of(m) for m in mats])
    mod = runner.module("mma_sync", "sm80")
    po = runner.zeros(frags.size, np.uint32)
    runner.launch(mod, "movmatrix_trans", GRID, BLOCK, runner.put(frags), po)
    out = runner.get(po, frags.size, np.uint32).reshape(ITEMS, 32)
    for w in range(ITEMS):
        assert np.array_equal(out[w], fragment_of(mats[w].T))


def test_ldmatrix_fragments_feed_mma(runner, rng):
    """examples/mma_ldmatrix.cuh: d = A * B + 1 from ldmatrix fragments, t = A[:8, :8] transposed."""
    a = rng.integers(-4, 5, (16, 16)).astype(np.float16)
    b = rng.integers(-4, 5, (16, 8)).astype(np.float16)
    mod = runner.module("mma_sync", "sm80")
    pd, pt = runner.zeros(128, np.float32), runner.zeros(64, np.float16)
    runner.launch(mod, "tile_mma", (1,), (32,), runner.put(a), runner.put(b), pd, pt)
    d = runner.get(pd, 128, np.float32).reshape(16, 8)
    assert np.array_equal(d, (a.astype(np.float64) @ b.astype(np.float64) + 1).astype(np.float32))
    assert np.array_equal(runner.get(pt, 64, np.float16).reshape(8, 8), a[:8, :8].T)


def test_mma_sync_with_part_of_a_warp_is_refused(runner):
    mod = runner.module("mma_sync", "sm80")
    z = runner.zeros(1024, np.float32)
    with pytest.raises(EmuError) as e:
        runner.launch(mod, "mma_m16n8k8_tf32", (1,), (20,), z, z, z, z)
    assert "all 32 lanes" in str(e.value)


@pytest.mark.parametrize("num", [1, 2, 4])
@pytest.mark.parametrize("trans", [False, True])
def test_stmatrix_writes_each_fragment_back_as_rows(num, trans, rng, two_batches):
    """stmatrix (sm_90 PTX) is ldmatrix's inverse: fragments in, 8x8 row-major matrices out."""
    mats = rng.integers(0, 1 << 16, (ITEMS, num, 8, 8)).astype(np.uint16)
    frags = np.zeros((ITEMS, 32, num), np.uint32)
    for w in range(ITEMS):
        for i in range(num):
            frags[w, :, i] = fragment_of(mats[w, i].T if trans else mats[w, i])
    kernel = f"stmatrix_x{num}" + ("_trans" if trans else "")

    def body(r):
        mod = r.module("stmatrix", "sm90")
        po = r.zeros(mats.size, np.uint16)
        r.launch(mod, kernel, GRID, BLOCK, r.put(frags), po)
        return {"out": r.get(po, mats.size, np.uint16)}
    assert np.array_equal(two_batches(body)["out"].reshape(mats.shape), mats)
