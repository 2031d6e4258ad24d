"""Packed 16-bit integer SIMD (PTX .s16x2/.u16x2: add, sub, min, max, .relu) and min/max.relu.s32.

Each 32-bit register holds two 16-bit halves that are computed on their own: sums wrap inside a
half (no carry into the other), comparisons are signed for .s16x2 and unsigned for .u16x2.
Expected values are worked out by hand from the PTX ISA's definitions."""
import numpy as np
import pytest

from cricket.backends.emu import pack_params
from cricket.backends.emu.errors import EmuError

# (a, b) -> expected result, per instruction
CASES = {
    "add.u16x2": [(0xFFFF0001, 0x00010001, 0x00000002),    # the high half wraps, the low half adds
                  (0x0000FFFF, 0x00000001, 0x00000000),    # no carry from the low into the high half
                  (0x12345678, 0x11111111, 0x23456789)],
    "add.s16x2": [(0x7FFF7FFF, 0x00010001, 0x80008000),    # signed overflow wraps in both halves
                  (0xFFFF0001, 0x0001FFFF, 0x00000000)],   # (-1, 1) + (1, -1)
    "sub.u16x2": [(0x00000000, 0x00010001, 0xFFFFFFFF),
                  (0x00050003, 0x00020004, 0x0003FFFF)],   # the low half borrows from nothing
    "sub.s16x2": [(0x80000000, 0x00010001, 0x7FFFFFFF),    # (-32768, 0) - (1, 1) = (32767, -1)
                  (0x00030005, 0x00050003, 0xFFFE0002)],   # (3, 5) - (5, 3) = (-2, 2)
    "min.s16x2": [(0x7FFF8000, 0x00000000, 0x00008000),    # (32767, -32768) vs (0, 0)
                  (0xFFFF0001, 0x0001FFFF, 0xFFFFFFFF)],   # mixed signs: (-1, 1) vs (1, -1) -> (-1, -1)
    "min.u16x2": [(0x7FFF8000, 0x00000000, 0x00000000),
                  (0xFFFF0001, 0x0001FFFF, 0x00010001)],   # 0xFFFF is large when unsigned
    "max.s16x2": [(0x7FFF8000, 0x00000000, 0x7FFF0000),
                  (0xFFFF0001, 0x0001FFFF, 0x00010001)],
    "max.u16x2": [(0x7FFF8000, 0x00000000, 0x7FFF8000),
                  (0xFFFF0001, 0x0001FFFF, 0xFFFFFFFF)],
    "max.relu.s16x2": [(0xFFFF0001, 0xFFFE0000, 0x00000001),   # (max(-1,-2) -> 0, max(1,0) = 1)
                       (0x80007FFF, 0x00010000, 0x00017FFF)],
    "min.relu.s16x2": [(0x80000005, 0x00010003, 0x00000003),   # (min(-32768,1) -> 0, min(5,3) = 3)
                       (0x00020004, 0x0003FFFF, 0x00020000)],  # (2, min(4,-1) -> 0)
    "min.relu.s32": [(-5 & 0xFFFFFFFF, 3, 0), (7, 9, 7), (0x80000000, 0x7FFFFFFF, 0)],
    "max.relu.s32": [(-5 & 0xFFFFFFFF, -3 & 0xFFFFFFFF, 0), (-5 & 0xFFFFFFFF, 4, 4),
                     (0x7FFFFFFF, 0x80000000, 0x7FFFFFFF)],
}

KERNEL = """
.version 9.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 pd, .param .u64 pa, .param .u64 pb, .param .u32 n)
{{
    .reg .pred %p;
    .reg .b32 %i, %n, %a, %b, %d;
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
    {op} %d, %a, %b;
    ld.param.u64 %base, [pd];
    add.s64 %ptr, %base, %off;
    st.global.b32 [%ptr], %d;
    ret;
}}
"""

# both operands immediate: the result is uniform over the lanes (the scalar path)
UNIFORM = """
.version 9.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 pd)
{{
    .reg .b32 %d;
    .reg .b64 %base, %off, %ptr;
    {op} %d, {a}, {b};
    ld.param.u64 %base, [pd];
    cvt.u64.u32 %off, %tid.x;
    shl.b64 %off, %off, 2;
    add.s64 %ptr, %base, %off;
    st.global.b32 [%ptr], %d;
    ret;
}}
"""


@pytest.mark.parametrize("op", sorted(CASES))
def test_packed_halves_are_computed_independently(two_batches, op):
    cases = CASES[op]
    reps = 70                                    # 3 CTAs of 64 threads, the last one partly idle
    a = np.array([c[0] for c in cases] * reps, dtype=np.uint32)
    b = np.array([c[1] for c in cases] * reps, dtype=np.uint32)
    want = np.array([c[2] for c in cases] * reps, dtype=np.uint32)
    n = len(a)

    def body(r):
        mod = r.dev.load_module([KERNEL.format(op=op)])
        fn = mod.get_function("k")
        pd = r.zeros(n, np.uint32)
        r.dev.launch(fn, (-(-n // 64),), (64,), 0, pack_params(fn, pd, r.put(a), r.put(b), n))
        return {"d": r.get(pd, n, np.uint32)}

    got = two_batches(body)["d"]
    assert [hex(x) for x in got[:len(cases)]] == [hex(c[2]) for c in cases]
    assert np.array_equal(got, want)


@pytest.mark.parametrize("op, a, b, want", [
    ("add.u16x2", 0xFFFF0001, 0x00010001, 0x00000002),
    ("sub.s16x2", 0x80000000, 0x00010001, 0x7FFFFFFF),
    ("min.s16x2", 0xFFFF0001, 0x0001FFFF, 0xFFFFFFFF),
    ("max.u16x2", 0xFFFF0001, 0x0001FFFF, 0xFFFFFFFF),
    ("max.relu.s16x2", 0xFFFF0001, 0xFFFE0000, 0x00000001),
])
def test_uniform_operands_give_the_same_result_in_every_lane(runner, op, a, b, want):
    mod = runner.dev.load_module([UNIFORM.format(op=op, a=hex(a), b=hex(b))])
    fn = mod.get_function("k")
    pd = runner.zeros(40, np.uint32)
    runner.dev.launch(fn, (1,), (40,), 0, pack_params(fn, pd))
    assert [hex(x) for x in set(runner.get(pd, 40, np.uint32).tolist())] == [hex(want)]


@pytest.mark.parametrize("op", ["max.relu.u16x2", "min.relu.u32"])
def test_relu_on_an_unsigned_type_is_refused_at_load(runner, op):
    with pytest.raises(EmuError) as info:
        runner.dev.load_module([KERNEL.format(op=op)])
    assert info.value.code == 801 and "relu" in str(info.value)
