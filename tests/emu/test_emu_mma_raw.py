"""mma.sync .b1 (and/xor popc), sub-byte (s4/u4), fp8 (e4m3/e5m2), m8n8k16/k32 and sm_90 f64 forms (cuda/mma_raw.cu).

The kernels take raw fragment registers; this test places the matrix elements with the PTX ISA's
layouts (g = lane >> 2, t = lane % 4), so a layout the emulator gets wrong gives a wrong product.
All inputs are exactly representable and every sum is exact: results are compared bit for bit.
"""
from __future__ import annotations

import numpy as np
import pytest

ITEMS, GRID, BLOCK = 4, (2,), (64,)
LANE = np.arange(32)[:, None]
G, T = LANE >> 2, LANE & 3


def m16n8_c(i):
    return G + 8 * (i // 2), 2 * T + i % 2


def m8n8_c(i):
    return G + 0 * i, 2 * T + i


def s8_k32_a(i):
    return G + 8 * ((i // 4) % 2), 4 * T + i % 4 + 16 * (i // 8)


def s8_k32_b(j):
    return 4 * T + j % 4 + 16 * (j // 4), G + 0 * j


def s4_a(i):        # m16n8k32 and m16n8k64
    return G + 8 * ((i // 8) % 2), 8 * T + i % 8 + 32 * (i // 16)


def s4_b(j):
    return 8 * T + j % 8 + 32 * (j // 8), G + 0 * j


def f64_a(i):       # m16n8k4, k8, k16
    return G + 8 * (i % 2), T + 4 * (i // 2)


def f64_b(j):
    return T + 4 * j, G + 0 * j


def b1_a(i):         # m16n8k128 and m16n8k256
    return G + 8 * ((i // 32) % 2), 32 * T + i % 32 + 128 * (i // 64)


def b1_b(j):
    return 32 * T + j % 32 + 128 * (j // 32), G + 0 * j


# kernel: (M, N, K, A type, B type, C type, A layout, B layout)
FORMS = {
    "mma_m16n8k32_s4": (16, 8, 32, "s4", "s4", "s32", s4_a, s4_b),
    "mma_m16n8k64_u4_s4": (16, 8, 64, "u4", "s4", "s32", s4_a, s4_b),
    "mma_m8n8k32_s4": (8, 8, 32, "s4", "s4", "s32", lambda i: (G + 0 * i, 8 * T + i), lambda j: (8 * T + j, G + 0 * j)),
    "mma_m8n8k16_u8_s8": (8, 8, 16, "u8", "s8", "s32", lambda i: (G + 0 * i, 4 * T + i),
                          lambda j: (4 * T + j, G + 0 * j)),
    "mma_m16n8k32_e4m3": (16, 8, 32, "e4m3", "e4m3", "f32", s8_k32_a, s8_k32_b),
    "mma_m16n8k32_e5m2_e4m3": (16, 8, 32, "e5m2", "e4m3", "f32", s8_k32_a, s8_k32_b),
    "mma_m8n8k128_b1_xor": (8, 8, 128, "b1", "b1", "s32", lambda i: (G + 0 * i, 32 * T + i),
                            lambda j: (32 * T + j, G + 0 * j)),
    "mma_m16n8k128_b1_and": (16, 8, 128, "b1", "b1", "s32", b1_a, b1_b),
    "mma_m16n8k256_b1_xor": (16, 8, 256, "b1", "b1", "s32", b1_a, b1_b),
    "mma_m16n8k4_f64": (16, 8, 4, "f64", "f64", "f64", f64_a, f64_b),
    "mma_m16n8k8_f64": (16, 8, 8, "f64", "f64", "f64", f64_a, f64_b),
    "mma_m16n8k16_f64": (16, 8, 16, "f64", "f64", "f64", f64_a, f64_b),
}
BITS = {"b1": 1, "s4": 4, "u4": 4, "u8": 8, "s8": 8, "e4m3": 8, "e5m2": 8, "f64": 64, "s32": 32, "f32": 32}


def e4m3_byte(v: float) -> int:
    """The .e4m3 encoding (bias 7, three mantissa bits) of a normal value or zero."""
    if v == 0:
        return 0
    m, e = np.frexp(abs(v))                      # abs(v) = m * 2^e, 0.5 <= m < 1
    byte = ((e - 1 + 7) << 3) | int(round((m * 2 - 1) * 8))
    return byte | (0x80 if v < 0 else 0)


def e5m2_byte(v: float) -> int:
    bits = int(np.float16(v).view(np.uint16))
    assert bits & 0xFF == 0
    return bits >> 8


def bits_of(x: np.ndarray, etype: str) -> np.ndarray:
    if etype == "e4m3":
        return np.vectorize(e4m3_byte)(x).astype(np.uint64)
    if etype == "e5m2":
        return np.vectorize(e5m2_byte)(x).astype(np.uint64)
    if etype in ("f64", "f32"):
        return x.astype(np.float64 if etype == "f64" else np.float32).view(
            np.uint64 if etype == "f64" else np.uint32).astype(np.uint64)
    return (x.astype(np.int64) & ((1 << BITS[etype]) - 1)).astype(np.uint64)


def registers(mat: np.ndarray, etype: str, layout, nel: int) -> np.ndarray:
    """(items, 32, regs) register values holding ``mat`` in the given fragment layout."""
    rows, cols = layout(np.arange(nel)[None, :])
    el = bits_of(mat, etype)[:, rows, cols]                  # (items, 32, nel)
    regbits = 64 if etype == "f64" else 32
    per = regbits // BITS[etype]
    el = el.reshape(ITEMS, 32, nel // per, per)
    regs = np.zeros(el.shape[:3], np.uint64)
    for j in range(per):
        regs |= el[..., j] << np.uint64(BITS[etype] * j)
    return regs.astype(np.uint64 if regbits == 64 else np.uint32)


@pytest.mark.parametrize("kernel", sorted(FORMS))
def test_mma_raw_forms_match_numpy_bit_for_bit(kernel, matrix_values, two_batches):
    m, n, k, at, bt, ct, la, lb = FORMS[kernel]
    a, b = matrix_values((ITEMS, m, k), at), matrix_values((ITEMS, k, n), bt)
    c = matrix_values((ITEMS, m, n), ct)
    cl = m16n8_c if m == 16 else m8n8_c
    nc = 4 if m == 16 else 2
    ra = registers(a, at, la, m * k // 32)
    rb = registers(b, bt, lb, k * n // 32)
    rc = registers(c, ct, cl, nc)

    def body(r):
        mod = r.module("mma_raw", "sm90")
        pd = r.zeros(rc.size, rc.dtype)
        r.launch(mod, kernel, GRID, BLOCK, r.put(ra), r.put(rb), r.put(rc), pd)
        return {"d": r.get(pd, rc.size, rc.dtype)}
    d = two_batches(body)["d"].reshape(ITEMS, 32, nc)
    rows, cols = cl(np.arange(nc)[None, :])
    got = d.view({"f64": np.float64, "f32": np.float32, "s32": np.int32}[ct])
    if kernel.endswith("_xor"):        # popc(a ^ b): the positions where the bits differ
        product = (a[:, :, :, None] != b[:, None, :, :]).sum(axis=2)
    else:
        product = np.matmul(a, b)
    expect = (product + c)[:, rows, cols]
    assert np.array_equal(got, expect.astype(got.dtype))
