"""The SIMD video instructions (vadd2 ... vset4: packed half-words and bytes with selectors, masks,
saturation and a secondary accumulate), and CUDA's SIMD intrinsics that nvcc lowers to them or to
.s16x2/.u16x2 arithmetic (tests/emu/cuda/simd_intrinsics.cu).

Hand-written cases are worked out from the PTX ISA's semantics (9.7.18.2); the intrinsics are
checked against NumPy models of the CUDA Math API's definitions."""
import numpy as np
import pytest

from cricket.backends.emu import pack_params
from cricket.backends.emu.errors import EmuError

KERNEL = """
.version 9.0
.target sm_75
.address_size 64
.visible .entry k(.param .u64 pd, .param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u32 n)
{{
    .reg .pred %p;
    .reg .b32 %i, %n, %a, %b, %c, %d;
    .reg .b64 %base, %off, %ptr;
    mov.u32 %i, %ctaid.x;
    mov.u32 %n, %ntid.x;
    mad.lo.s32 %i, %i, %n, %tid.x;
    ld.param.u32 %n, [n];
    setp.ge.u32 %p, %i, %n;
    @%p ret;
    mul.wide.u32 %off, %i, 4;
    ld.param.u64 %base, [pa];
    add.s64 %ptr, %base, %off;
    ld.global.b32 %a, [%ptr];
    ld.param.u64 %base, [pb];
    add.s64 %ptr, %base, %off;
    ld.global.b32 %b, [%ptr];
    ld.param.u64 %base, [pc];
    add.s64 %ptr, %base, %off;
    ld.global.b32 %c, [%ptr];
    {instr};
    ld.param.u64 %base, [pd];
    add.s64 %ptr, %base, %off;
    st.global.b32 [%ptr], %d;
    ret;
}}
"""

M = 0xFFFFFFFF
# instruction with operands d, a, b, c -> [(a, b, c, expected d)]
CASES = {
    # half-words: (hi, lo) pairs; without selectors a's halves meet b's, c is ignored (mask .h10)
    "vadd2.u32.u32.u32 %d, %a, %b, %c": [(0xFFFF0001, 0x00010002, 0xDEADBEEF, 0x00000003)],
    "vadd2.u32.u32.u32.sat %d, %a, %b, %c": [(0xFFFF0001, 0x00010002, 0, 0xFFFF0003)],
    "vadd2.s32.s32.s32.sat %d, %a, %b, %c": [(0x7FFF8000, 0x0001FFFF, 0, 0x7FFF8000),   # both clamp
                                             (0x00050003, 0xFFFEFFFC, 0, 0x0003FFFF)],  # 5-2=3, 3-4=-1
    "vsub2.u32.u32.u32.sat %d, %a, %b, %c": [(0x00030005, 0x00050003, 0, 0x00000002)],  # 3-5 clamps to 0
    "vsub2.s32.u32.u32.sat %d, %a, %b, %c": [(0x00030005, 0x00050003, 0, 0xFFFE0002)],  # signed dest: -2
    "vsub2.u32.u32.u32 %d, %a, %b, %c": [(0x00030005, 0x00050003, 0, 0xFFFE0002)],       # wraps
    # mixed operand types: a's halves signed, b's unsigned
    "vmin2.s32.s32.u32 %d, %a, %b, %c": [(0xFFFF0005, 0x8000FFFF, 0, 0xFFFF0005)],      # -1<32768, 5<65535
    "vmax2.u32.u32.u32 %d, %a, %b, %c": [(0xFFFF0005, 0x8000FFFF, 0, 0xFFFFFFFF)],
    "vmax2.s32.s32.s32 %d, %a, %b, %c": [(0xFFFF0005, 0x8000FFFF, 0, 0xFFFF0005)],
    "vabsdiff2.u32.s32.s32 %d, %a, %b, %c": [(0x7FFF0001, 0x8000FFFF, 0, 0xFFFF0002)],  # 32767-(-32768)
    "vabsdiff2.s32.s32.s32.sat %d, %a, %b, %c": [(0x7FFF0001, 0x8000FFFF, 0, 0x7FFF0002)],
    # average rounds halves away from zero: (3+4)/2 -> 4, (-3-4)/2 -> -4, (-1+0)/2 -> -1
    "vavrg2.s32.s32.s32 %d, %a, %b, %c": [(0x0003FFFD, 0x0004FFFC, 0, 0x0004FFFC),
                                          (0xFFFF0000, 0x00000000, 0, 0xFFFF0000)],
    "vavrg2.u32.u32.u32 %d, %a, %b, %c": [(0xFFFF0003, 0xFFFE0004, 0, 0xFFFF0004)],     # no overflow
    # mask: only the low half takes the result, the high half comes from c
    "vadd2.u32.u32.u32 %d.h0, %a, %b, %c": [(0x00010001, 0x00010001, 0xABCD1234, 0xABCD0002)],
    "vadd2.u32.u32.u32 %d.h1, %a, %b, %c": [(0x00010001, 0x00010001, 0xABCD1234, 0x00021234)],
    # selectors pick from the four half-words of b:a (h0, h1 = a; h2, h3 = b)
    "vadd2.u32.u32.u32 %d, %a.h00, %b.h33, %c": [(0x00020001, 0x00200010, 0, 0x00210021)],
    "vsub2.u32.u32.u32 %d, %a.h23, %b.h01, %c": [(0x00020001, 0x00200010, 0, 0x000F001E)],  # h3-h1, h2-h0
    # accumulate: d = c + both results (full width, signed), no truncation to 16 bits
    "vabsdiff2.u32.u32.u32.add %d, %a, %b, %c": [(0xFFFF0000, 0x0000FFFF, 10, 10 + 2 * 0xFFFF)],
    "vsub2.s32.s32.s32.add %d, %a, %b, %c": [(0x00000000, 0x00010002, 100, 97),
                                             (0x00000000, 0x00010002, 1, M - 1)],       # 1 - 3 wraps
    "vsub2.s32.s32.s32.add %d.h1, %a, %b, %c": [(0x00000000, 0x00010002, 100, 99)],
    # comparisons: 1 per element; merge keeps c's other elements; accumulate counts
    "vset2.s32.s32.lt %d, %a, %b, %c": [(0xFFFF0005, 0x00000004, 0, 0x00010000)],
    "vset2.u32.u32.lt %d, %a, %b, %c": [(0xFFFF0005, 0x00000004, 0, 0x00000000)],
    "vset2.u32.u32.ne.add %d, %a, %b, %c": [(0x00010002, 0x00010003, 7, 8)],
    "vset2.s32.s32.eq %d.h1, %a, %b, %c": [(0x00010002, 0x00010003, 0xAAAABBBB, 0x0001BBBB)],
    # bytes
    "vadd4.u32.u32.u32 %d, %a, %b, %c": [(0xFF807F01, 0x01818102, 0, 0x00010003)],
    # signed: 1+2, 127-127, -128-127 (clamps to -128), -1+1
    "vadd4.s32.s32.s32.sat %d, %a, %b, %c": [(0xFF807F01, 0x01818102, 0, 0x00800003)],
    "vadd4.u32.u32.u32.sat %d, %a, %b, %c": [(0xFF807F01, 0x01818102, 0, 0xFFFFFF03)],
    "vsub4.s32.s32.s32.sat %d, %a, %b, %c": [(0x807F0000, 0x01FF7F80, 0, 0x807F817F)],
    "vmin4.s32.s32.s32 %d, %a, %b, %c": [(0x807F00FF, 0x7F800001, 0, 0x808000FF)],
    "vmin4.u32.u32.u32 %d, %a, %b, %c": [(0x807F00FF, 0x7F800001, 0, 0x7F7F0001)],
    "vmax4.u32.s32.u32 %d, %a, %b, %c": [(0x807F00FF, 0x7F800001, 0, 0x7F800001)],      # a signed
    "vabsdiff4.u32.u32.u32 %d, %a, %b, %c": [(0x00FF1020, 0xFF002010, 0, 0xFFFF1010)],
    "vabsdiff4.u32.u32.u32.add %d, %a, %b, %c": [(0x00FF1020, 0xFF002010, 5, 5 + 255 + 255 + 16 + 16)],
    "vavrg4.s32.s32.s32 %d, %a, %b, %c": [(0xFD030101, 0xFC04FE00, 0, 0xFC04FF01)],     # -3-4, 3+4, 1-2, 1+0
    "vset4.s32.s32.gt %d, %a, %b, %c": [(0x0180FF02, 0x00000001, 0, 0x01000001)],
    "vset4.u32.u32.ge.add %d, %a, %b, %c": [(0x0180FF02, 0x00000001, 1000, 1004)],
    "vadd4.u32.u32.u32 %d.b31, %a, %b, %c": [(0x01010101, 0x01010101, 0xAABBCCDD, 0x02BB02DD)],
    "vadd4.u32.u32.u32 %d, %a.b0000, %b.b7777, %c": [(0x00000005, 0x0A000000, 0, 0x0F0F0F0F)],
    "vmax4.u32.u32.u32 %d, %a.b4567, %b.b3210, %c": [(0x01020304, 0x05060708, 0, 0x08070605)],
}


@pytest.mark.parametrize("instr", sorted(CASES))
def test_video_instruction_matches_the_isa(two_batches, instr):
    cases = CASES[instr]
    reps = 50                                    # several CTAs of 64 threads, the last partly idle
    cols = [np.array([c[k] for c in cases] * reps, dtype=np.uint32) for k in range(4)]
    n = len(cols[0])

    def body(r):
        mod = r.dev.load_module([KERNEL.format(instr=instr)])
        fn = mod.get_function("k")
        pd = r.zeros(n, np.uint32)
        r.dev.launch(fn, (-(-n // 64),), (64,), 0, pack_params(fn, pd, *(r.put(c) for c in cols[:3]), n))
        return {"d": r.get(pd, n, np.uint32)}

    got = two_batches(body)["d"]
    assert [hex(x) for x in got[:len(cases)]] == [hex(c[3]) for c in cases]
    assert np.array_equal(got, cols[3])


@pytest.mark.parametrize("instr", [
    "vadd2.u32.u32.u32.sat.add %d, %a, %b, %c",       # saturation with accumulate
    "vadd2.u32.u32 %d, %a, %b, %c",                   # a type missing
    "vset2.u32.u32 %d, %a, %b, %c",                   # no comparison
    "vadd2.u32.u32.u32 %d, %a.b10, %b, %c",           # byte selector on a half-word instruction
    "vadd2.u32.u32.u32 %d, %a.h4, %b, %c",            # half-word 4 does not exist, and one too few
    "vadd4.u32.u32.u32 %d, %a.b8888, %b, %c",
    "vadd4.u32.u32.u32 %d.b01, %a, %b, %c",           # mask bytes out of order
])
def test_malformed_video_instructions_are_invalid_ptx(runner, instr):
    with pytest.raises(EmuError) as info:
        mod = runner.dev.load_module([KERNEL.format(instr=instr)])
        fn = mod.get_function("k")
        runner.dev.launch(fn, (1,), (1,), 0, pack_params(fn, 0, 0, 0, 0, 0))
    assert info.value.code == 218


def test_a_selector_on_another_instruction_is_refused(runner):
    with pytest.raises(EmuError) as info:
        runner.dev.load_module([KERNEL.format(instr="add.u32 %d, %a.h10, %b")])
    assert info.value.code == 218 and "selector" in str(info.value)


# ---- CUDA's SIMD intrinsics, built by nvcc ------------------------------------------------------

def lanes(x: np.ndarray, bits: int, signed: bool) -> np.ndarray:
    """The elements of packed words, element 0 first: shape (len(x), 32 // bits), as int64."""
    k = 32 // bits
    v = (x.astype(np.int64)[:, None] >> (np.arange(k) * bits)) & ((1 << bits) - 1)
    return np.where(v >= 1 << (bits - 1), v - (1 << bits), v) if signed else v


def pack(v: np.ndarray, bits: int) -> np.ndarray:
    k = v.shape[1]
    return ((v & ((1 << bits) - 1)) << (np.arange(k) * bits)).sum(axis=1).astype(np.uint32)


def clamp(v, bits, signed):
    return np.clip(v, -(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else np.clip(v, 0, (1 << bits) - 1)


def intrinsics_model(a: np.ndarray, b: np.ndarray) -> list[np.ndarray]:
    """The Math API's definition of each intrinsic, in the order simd_intrinsics.cu stores them."""
    s2a, s2b, u2a, u2b = lanes(a, 16, True), lanes(b, 16, True), lanes(a, 16, False), lanes(b, 16, False)
    s4a, s4b, u4a, u4b = lanes(a, 8, True), lanes(b, 8, True), lanes(a, 8, False), lanes(b, 8, False)
    return [
        pack(np.minimum(s2a, s2b), 16), pack(np.minimum(u2a, u2b), 16),
        pack(np.maximum(s2a, s2b), 16), pack(np.maximum(u2a, u2b), 16),
        pack(u2a + u2b, 16), pack(u2a - u2b, 16),
        pack(clamp(s2a + s2b, 16, True), 16), pack(clamp(u2a + u2b, 16, False), 16),
        pack(clamp(s2a - s2b, 16, True), 16), pack(clamp(u2a - u2b, 16, False), 16),
        pack(np.abs(s2a - s2b), 16), pack(np.abs(u2a - u2b), 16),
        pack((u2a + u2b + 1) >> 1, 16), pack((u2a + u2b) >> 1, 16),        # rounded up / truncated
        pack(np.where(u2a == u2b, 0xFFFF, 0), 16), pack(np.where(s2a >= s2b, 0xFFFF, 0), 16),
        pack((u2a >= u2b).astype(np.int64), 16), pack(-s2a, 16),
        np.abs(s2a - s2b).sum(axis=1).astype(np.uint32), pack(clamp(np.abs(s2a), 16, True), 16),
        pack(np.minimum(s4a, s4b), 8), pack(np.minimum(u4a, u4b), 8),
        pack(np.maximum(s4a, s4b), 8), pack(np.maximum(u4a, u4b), 8),
        pack(u4a + u4b, 8), pack(u4a - u4b, 8),
        pack(np.abs(u4a - u4b), 8), np.abs(u4a - u4b).sum(axis=1).astype(np.uint32),
        pack(np.where(u4a > u4b, 0xFF, 0), 8), pack((u4a == u4b).astype(np.int64), 8),
    ]


@pytest.mark.parametrize("variant", ["sm75", "sm90"])
def test_cuda_simd_intrinsics_compute_their_definitions(two_batches, rng, variant):
    edges = np.array([0, M, 0x7FFF8000, 0x80007FFF, 0x7F7F8080, 0x80807F7F, 0x00FF00FF, 0xFFFF0001, 0x01000100],
                     dtype=np.uint32)
    a = np.concatenate([np.repeat(edges, len(edges)), rng.integers(0, 1 << 32, 300, dtype=np.uint32)])
    b = np.concatenate([np.tile(edges, len(edges)), rng.integers(0, 1 << 32, 300, dtype=np.uint32)])
    b[-50:] = a[-50:]                             # equal operands for the comparisons
    n, ops = len(a), 30

    def body(r):
        m = r.module("simd_intrinsics", variant)
        out = r.zeros(n * ops, np.uint32)
        r.launch(m, "simd_intrinsics", (-(-n // 128),), (128,), r.put(a), r.put(b), out, n)
        return {"out": r.get(out, n * ops, np.uint32).reshape(n, ops)}

    got = two_batches(body)["out"]
    for k, want in enumerate(intrinsics_model(a, b)):
        bad = np.flatnonzero(got[:, k] != want)
        assert bad.size == 0, (f"result {k}: a={a[bad[0]]:#010x} b={b[bad[0]]:#010x} "
                               f"got {got[bad[0], k]:#010x} want {want[bad[0]]:#010x}")
