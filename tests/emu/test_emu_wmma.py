"""wmma (mma.h) kernels from nvcc (cuda/wmma.cu, sm_80 PTX) against a NumPy matmul.

Each warp computes D = A*B + C for its own item, with A, B, C and D laid out row- or column-major
with padded leading dimensions passed at run time. Small-integer inputs make every sum exact, so
those results are compared bit for bit; random inputs are compared with a tolerance, because the
PTX ISA leaves the order of the additions inside the tensor core unspecified.
"""
from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from cricket.backends.emu.errors import EmuError

ITEMS, GRID, BLOCK = 4, (2,), (64,)      # two warps per block, one item per warp
PAD = 16                                  # extra elements per leading dimension

# kernel: (M, N, K, multiplicand type, accumulator type, A layout, B layout)
WMMA = {
    "wmma_f16_f32_m16n16k16_rr": (16, 16, 16, "f16", "f32", "row", "row"),
    "wmma_f16_f32_m16n16k16_cc": (16, 16, 16, "f16", "f32", "col", "col"),
    "wmma_f16_f16_m16n16k16_rc": (16, 16, 16, "f16", "f16", "row", "col"),
    "wmma_f16_f32_m32n8k16_rc": (32, 8, 16, "f16", "f32", "row", "col"),
    "wmma_f16_f16_m8n32k16_cr": (8, 32, 16, "f16", "f16", "col", "row"),
    "wmma_bf16_f32_m16n16k16_rr": (16, 16, 16, "bf16", "f32", "row", "row"),
    "wmma_bf16_f32_m32n8k16_cc": (32, 8, 16, "bf16", "f32", "col", "col"),
    "wmma_bf16_f32_m8n32k16_rc": (8, 32, 16, "bf16", "f32", "row", "col"),
    "wmma_tf32_f32_m16n16k8_rc": (16, 16, 8, "tf32", "f32", "row", "col"),
    "wmma_tf32_f32_m16n16k8_cr": (16, 16, 8, "tf32", "f32", "col", "row"),
    "wmma_f64_m8n8k4_rc": (8, 8, 4, "f64", "f64", "row", "col"),
    "wmma_f64_m8n8k4_cr": (8, 8, 4, "f64", "f64", "col", "row"),
    "wmma_s8_m16n16k16_rc": (16, 16, 16, "s8", "s32", "row", "col"),
    "wmma_u8_m32n8k16_rr": (32, 8, 16, "u8", "s32", "row", "row"),
    "wmma_s8_m8n32k16_cc": (8, 32, 16, "s8", "s32", "col", "col"),
}

# host dtype of each element type (bf16 travels as its 16 bits)
HOST = {"f16": np.float16, "bf16": np.uint16, "tf32": np.float32, "f32": np.float32, "f64": np.float64,
        "s8": np.int8, "u8": np.uint8, "s32": np.int32}


def to_bf16(x: np.ndarray) -> np.ndarray:
    """float values that bfloat16 holds exactly, as bf16 bits."""
    bits = np.asarray(x, np.float32).view(np.uint32)
    assert not (bits & 0xFFFF).any(), "not exactly representable in bf16"
    return (bits >> 16).astype(np.uint16)


def from_bf16(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << 16).view(np.float32)


def encode(values: np.ndarray, etype: str) -> np.ndarray:
    return to_bf16(values) if etype == "bf16" else values.astype(HOST[etype])


def stored(m: np.ndarray, col_major: bool) -> tuple[np.ndarray, int]:
    """(items, rows, cols) matrices in memory with a padded leading dimension: (flat array, ld)."""
    if col_major:
        m = m.transpose(0, 2, 1)
    ld = m.shape[2] + PAD
    buf = np.zeros(m.shape[:2] + (ld,), m.dtype)
    buf[:, :, : m.shape[2]] = m
    flat = buf.reshape(-1)
    return (flat.view(np.uint8) if flat.itemsize == 1 else flat), ld


def run_wmma(two_batches, kernel: str, a: np.ndarray, b: np.ndarray, c: np.ndarray, c_col: bool):
    m, n, k, at, ct, la, lb = WMMA[kernel]
    abuf, lda = stored(encode(a, at), la == "col")
    bbuf, ldb = stored(encode(b, at), lb == "col")
    cbuf, ldc = stored(c.astype(HOST[ct]), c_col)

    def body(r):
        mod = r.module("wmma", "sm80")
        pd = r.zeros(cbuf.size, HOST[ct])
        r.launch(mod, kernel, GRID, BLOCK, r.put(abuf), r.put(bbuf), r.put(cbuf), pd, lda, ldb, ldc,
                 abuf.size // ITEMS, bbuf.size // ITEMS, cbuf.size // ITEMS, int(c_col))
        return {"d": r.get(pd, cbuf.size, HOST[ct])}

    d = two_batches(body)["d"].reshape(ITEMS, -1, ldc)[:, :, : (m if c_col else n)]
    return d.transpose(0, 2, 1) if c_col else d


def reference(a, b, c, etype_c: str):
    return (np.matmul(a, b) + c).astype(HOST[etype_c])


@pytest.mark.parametrize("kernel", sorted(WMMA))
@pytest.mark.parametrize("c_col", [False, True])
def test_wmma_exact_sums_match_numpy_bit_for_bit(kernel, c_col, matrix_values, two_batches):
    m, n, k, at, ct, _, _ = WMMA[kernel]
    a = matrix_values((ITEMS, m, k), at)
    b = matrix_values((ITEMS, k, n), at)
    c = matrix_values((ITEMS, m, n), ct)
    d = run_wmma(two_batches, kernel, a, b, c, c_col)
    assert np.array_equal(d, reference(a, b, c, ct))


@pytest.mark.parametrize("kernel", [k for k, v in WMMA.items() if v[3] in ("f16", "bf16", "tf32")])
def test_wmma_random_floats_within_accumulator_rounding(kernel, rng, two_batches):
    """Random operands: the tensor core's order of additions is unspecified, so allow the rounding
    of K additions in the accumulator type (relative to the sum of the magnitudes)."""
    m, n, k, at, ct, _, _ = WMMA[kernel]
    a = rng.standard_normal((ITEMS, m, k))
    b = rng.standard_normal((ITEMS, k, n))
    if at == "f16":
        a, b = a.astype(np.float16).astype(np.float64), b.astype(np.float16).astype(np.float64)
    elif at == "bf16":
        a, b = (from_bf16(to_bf16_trunc(x)).astype(np.float64) for x in (a, b))
    else:   # tf32: ten mantissa bits
        a, b = (from_tf32(x) for x in (a, b))
    c = rng.standard_normal((ITEMS, m, n)).astype(HOST[ct]).astype(np.float64)
    d = run_wmma(two_batches, kernel, a, b, c, False).astype(np.float64)
    eps = np.finfo(HOST[ct]).eps
    bound = (k + 1) * eps * (np.matmul(np.abs(a), np.abs(b)) + np.abs(c))
    assert (np.abs(d - (np.matmul(a, b) + c)) <= bound).all()


def to_bf16_trunc(x: np.ndarray) -> np.ndarray:
    return (np.asarray(x, np.float32).view(np.uint32) >> 16).astype(np.uint16)


def from_tf32(x: np.ndarray) -> np.ndarray:
    return (np.asarray(x, np.float32).view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32).astype(np.float64)


def test_wmma_tf32_rounds_with_cvt_rna_and_scales_elementwise(runner, rng):
    """__float_to_tf32 (cvt.rna.tf32.f32) rounds to nearest, ties away from zero; the accumulator
    fragments are then combined element by element (alpha * AB + beta * C)."""
    a = rng.standard_normal((16, 8)).astype(np.float32)
    b = rng.standard_normal((8, 16)).astype(np.float32)
    a[0, 0] = np.float32(1 + 2 ** -11)          # a tie: rounds away from zero to 1 + 2^-10
    a[0, 1] = np.float32(-(1 + 2 ** -11))
    c = rng.standard_normal((16, 16)).astype(np.float32)
    mod = runner.module("wmma", "sm80")
    pd = runner.zeros(256, np.float32)
    runner.launch(mod, "wmma_tf32_rounded_axpby", (1,), (32,), runner.put(a), runner.put(b), runner.put(c), pd,
                  np.float32(2.0), np.float32(-0.5))
    d = runner.get(pd, 256, np.float32).reshape(16, 16).astype(np.float64)

    def rna(x):
        bits = x.view(np.uint32)
        return ((bits + np.uint32(0x1000)) & np.uint32(0xFFFFE000)).view(np.float32).astype(np.float64)
    ra, rb = rna(a), rna(b)
    assert ra[0, 0] == 1 + 2 ** -10 and ra[0, 1] == -(1 + 2 ** -10)
    acc = np.matmul(ra, rb)
    expect = 2.0 * acc.astype(np.float32).astype(np.float64) - 0.5 * c
    bound = 9 * np.finfo(np.float32).eps * (2 * np.matmul(np.abs(ra), np.abs(rb)) + np.abs(c))
    assert (np.abs(d - expect) <= bound).all()


def test_wmma_fragments_in_shared_memory(runner, rng):
    a = rng.integers(-3, 4, (16, 16)).astype(np.float16)
    b = rng.integers(-3, 4, (16, 16)).astype(np.float16)
    mod = runner.module("wmma", "sm80")
    pd = runner.zeros(256, np.float32)
    runner.launch(mod, "wmma_f16_shared", (1,), (64,), runner.put(a), runner.put(b), pd)
    d = runner.get(pd, 256, np.float32).reshape(16, 16)
    assert np.array_equal(d, (a.astype(np.float64) @ b.astype(np.float64) + 1).astype(np.float32))


def test_wmma_needs_the_whole_warp(runner, rng):
    """A block of 16 threads is half a warp: the collective cannot run and says why."""
    a = np.zeros(256, np.float16)
    mod = runner.module("wmma", "sm80")
    pd = runner.zeros(256, np.float32)
    with pytest.raises(EmuError) as e:
        runner.launch(mod, "wmma_f16_shared", (1,), (16,), runner.put(a), runner.put(a), pd)
    assert "all 32 lanes" in str(e.value)


def test_tiled_wmma_gemm_matches_numpy(rng, two_batches):
    """examples/wmma_gemm.cuh: shared-memory tiles, four warps per block, many blocks."""
    m, n, k = 64, 96, 48
    a = rng.integers(-4, 5, (m, k)).astype(np.float16)
    b = rng.integers(-4, 5, (k, n)).astype(np.float16)

    def body(r):
        mod = r.module("wmma_gemm", "sm80")
        pc = r.zeros(m * n, np.float32)
        r.launch(mod, "wmma_gemm", (n // 32, m // 32), (128,), r.put(a), r.put(b), pc, m, n, k)
        return {"c": r.get(pc, m * n, np.float32)}
    c = two_batches(body)["c"].reshape(m, n)
    assert np.array_equal(c, (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32))


@pytest.mark.nvcc
def test_debug_builds_of_the_matrix_kernels_run(tmp_path, make_runner, rng):
    """-G keeps fragments in local memory and moves them through many more registers."""
    cuda = Path(__file__).resolve().parent / "cuda"
    texts = {}
    for name in ("wmma", "mma_sync"):
        out = tmp_path / f"{name}.ptx"
        subprocess.run(["nvcc", "-ptx", "-G", "-arch=sm_80", str(cuda / f"{name}.cu"), "-o", str(out)], check=True)
        texts[name] = out.read_text()
    r = make_runner()
    a = rng.integers(-4, 5, (16, 16)).astype(np.float16)
    b = rng.integers(-4, 5, (16, 16)).astype(np.float16)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    pd = r.zeros(256, np.float32)
    r.launch(r.dev.load_module([texts["wmma"]]), "wmma_f16_shared", (1,), (64,), r.put(a), r.put(b), pd)
    assert np.array_equal(r.get(pd, 256, np.float32).reshape(16, 16), (exact + 1).astype(np.float32))
    pd, pt = r.zeros(128, np.float32), r.zeros(64, np.float16)
    r.launch(r.dev.load_module([texts["mma_sync"]]), "tile_mma", (1,), (32,), r.put(a), r.put(b[:, :8].copy()), pd, pt)
    assert np.array_equal(r.get(pd, 128, np.float32).reshape(16, 8), (exact[:, :8] + 1).astype(np.float32))


def packed(m: np.ndarray, bits: int) -> np.ndarray:
    """Rows of small integers packed ``bits`` wide, element 0 in the lowest bits (as registers)."""
    v = (m.astype(np.int64) & ((1 << bits) - 1)).astype(np.uint8)
    if bits == 1:
        return np.packbits(v, axis=-1, bitorder="little")
    return (v[..., 0::2] | (v[..., 1::2] << 4)).astype(np.uint8)


@pytest.mark.parametrize("kernel,etype,k,c_col", [("wmma_s4_m8n8k32", "s4", 32, False),
                                                 ("wmma_u4_m8n8k32", "u4", 32, True),
                                                 ("wmma_b1_m8n8k128", "b1", 128, False),
                                                 ("wmma_b1_m8n8k128", "b1", 128, True)])
def test_sub_byte_wmma_matches_numpy(kernel, etype, k, c_col, matrix_values, two_batches):
    """wmma::experimental s4/u4 (mma) and b1 (bmma_sync, XOR + POPC): A row-major, B column-major."""
    bits = 1 if etype == "b1" else 4
    ld = 2 * k                                            # padded leading dimension, in elements
    a = matrix_values((ITEMS, 8, k), etype)
    b = matrix_values((ITEMS, k, 8), etype)
    c = matrix_values((ITEMS, 8, 8), "s32")
    abuf = np.zeros((ITEMS, 8, ld), np.int64)
    abuf[:, :, :k] = a
    bbuf = np.zeros((ITEMS, 8, ld), np.int64)
    bbuf[:, :, :k] = b.transpose(0, 2, 1)                 # column n of B is row n of the buffer
    cmem = (c.transpose(0, 2, 1) if c_col else c).astype(np.int32)

    def body(r):
        mod = r.module("wmma", "sm80")
        pd = r.zeros(cmem.size, np.int32)
        r.launch(mod, kernel, GRID, BLOCK, r.put(packed(abuf, bits)), r.put(packed(bbuf, bits)), r.put(cmem), pd,
                 ld, ld, int(c_col))
        return {"d": r.get(pd, cmem.size, np.int32)}
    d = two_batches(body)["d"].reshape(ITEMS, 8, 8)
    d = d.transpose(0, 2, 1) if c_col else d
    if etype == "b1":
        product = (a[:, :, :, None] != b[:, None, :, :]).sum(axis=2)
    else:
        product = np.matmul(a, b)
    assert np.array_equal(d, (product + c).astype(np.int32))
