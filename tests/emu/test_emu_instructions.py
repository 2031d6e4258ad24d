"""Per-instruction semantics at edge values: each case is a one-instruction PTX kernel over arrays."""
from fractions import Fraction

import numpy as np
import pytest

from cricket.backends.emu import pack_params

NPT = {"s8": np.int8, "u8": np.uint8, "s16": np.int16, "u16": np.uint16, "b16": np.uint16, "s32": np.int32,
       "u32": np.uint32, "b32": np.uint32, "s64": np.int64, "u64": np.uint64, "b64": np.uint64, "f32": np.float32,
       "f64": np.float64}
I32MIN, I32MAX = -2**31, 2**31 - 1
NAN = float("nan")
INF = float("inf")


def op_ptx(body: str, dtype: str, inputs: dict) -> str:
    """A kernel: d[i] = BODY(a[i], b[i], ...), with registers %a, %b, %c (inputs) and %d (result)."""
    params = ["    .param .u64 p_d"] + [f"    .param .u64 p_{k}" for k in inputs]
    lines = [".version 9.0", ".target sm_75", ".address_size 64",
             ".visible .entry k(", ",\n".join(params), ")", "{",
             "    .reg .b32 %i;", "    .reg .b64 %base, %off, %ptr;", "    .reg .pred %q<4>;",
             f"    .reg .{dtype} %d;", "    .reg .b32 %cc_tmp;"]
    for k, t in inputs.items():
        lines.append(f"    .reg .{t} %{k};")
    lines.append("    mov.u32 %i, %tid.x;")
    for k, t in inputs.items():
        size = np.dtype(NPT[t]).itemsize
        lines += [f"    ld.param.u64 %base, [p_{k}];", f"    mul.wide.u32 %off, %i, {size};",
                  "    add.s64 %ptr, %base, %off;", f"    ld.global.{t} %{k}, [%ptr];"]
    lines += ["    " + ln.strip() for ln in body.strip().splitlines()]
    size = np.dtype(NPT[dtype]).itemsize
    lines += ["    ld.param.u64 %base, [p_d];", f"    mul.wide.u32 %off, %i, {size};",
              "    add.s64 %ptr, %base, %off;", f"    st.global.{dtype} [%ptr], %d;", "    ret;", "}"]
    return "\n".join(lines) + "\n"


def run_op(runner, body, dtype, **inputs):
    """inputs: name=(ptx type, values). Returns the result array of PTX type ``dtype``."""
    arrays = {k: np.asarray(v, dtype=NPT[t]) for k, (t, v) in inputs.items()}
    n = len(next(iter(arrays.values())))
    mod = runner.dev.load_module([op_ptx(body, dtype, {k: t for k, (t, _) in inputs.items()})])
    fn = mod.get_function("k")
    pd = runner.zeros(n, NPT[dtype])
    ptrs = [runner.put(a) for a in arrays.values()]
    runner.dev.launch(fn, (1,), (n,), 0, pack_params(fn, pd, *ptrs))
    return runner.get(pd, n, NPT[dtype])


def bits(x):
    x = np.asarray(x)
    return x.view(f"u{x.dtype.itemsize}")


# ---- integers -----------------------------------------------------------------------------------
def test_add_sub_wrap_around(runner):
    a = [I32MAX, I32MIN, -1, 5]
    b = [1, -1, 1, -7]
    assert list(run_op(runner, "add.s32 %d, %a, %b;", "s32", a=("s32", a), b=("s32", b))) == [I32MIN, I32MAX, 0, -2]
    assert list(run_op(runner, "sub.s32 %d, %a, %b;", "s32", a=("s32", a), b=("s32", b))) == [I32MAX - 1, I32MIN + 1,
                                                                                               -2, 12]
    assert list(run_op(runner, "add.sat.s32 %d, %a, %b;", "s32", a=("s32", a), b=("s32", b))) == [I32MAX, I32MIN, 0,
                                                                                                   -2]


def test_signed_division_truncates_and_int_min_by_minus_one_wraps(runner):
    a = [7, -7, 7, -7, I32MIN, I32MIN, 0]
    b = [2, 2, -2, -2, -1, 1, 5]
    assert list(run_op(runner, "div.s32 %d, %a, %b;", "s32", a=("s32", a), b=("s32", b))) == [3, -3, -3, 3, I32MIN,
                                                                                               I32MIN, 0]
    assert list(run_op(runner, "rem.s32 %d, %a, %b;", "s32", a=("s32", a), b=("s32", b))) == [1, -1, 1, -1, 0, 0, 0]
    a64 = [-(2**63), 2**63 - 1, -9]
    b64 = [-1, -1, 4]
    assert list(run_op(runner, "div.s64 %d, %a, %b;", "s64", a=("s64", a64), b=("s64", b64))) == [-(2**63),
                                                                                                   -(2**63 - 1), -2]
    assert list(run_op(runner, "rem.s64 %d, %a, %b;", "s64", a=("s64", a64), b=("s64", b64))) == [0, 0, -1]


def test_division_by_zero_gives_all_ones_and_remainder_the_dividend(runner):
    # PTX leaves x/0 machine-specific; the emulator follows the GPU's division sequence (all ones)
    a = [5, 0xFFFFFFFF, 0]
    z = [0, 0, 0]
    assert list(run_op(runner, "div.u32 %d, %a, %b;", "u32", a=("u32", a), b=("u32", z))) == [0xFFFFFFFF] * 3
    assert list(run_op(runner, "rem.u32 %d, %a, %b;", "u32", a=("u32", a), b=("u32", z))) == a


def test_oversized_shift_amounts(runner):
    n = [0, 1, 31, 32, 33, 255, 1 << 31]
    a = [0x80000001] * len(n)
    shl = run_op(runner, "shl.b32 %d, %a, %b;", "b32", a=("b32", a), b=("u32", n))
    assert list(shl) == [0x80000001, 2, 0x80000000, 0, 0, 0, 0]
    shr_u = run_op(runner, "shr.u32 %d, %a, %b;", "u32", a=("u32", a), b=("u32", n))
    assert list(shr_u) == [0x80000001, 0x40000000, 1, 0, 0, 0, 0]
    shr_s = run_op(runner, "shr.s32 %d, %a, %b;", "s32", a=("s32", [-2147483647] * len(n)), b=("u32", n))
    assert list(shr_s) == [-2147483647, -1073741824, -1, -1, -1, -1, -1]
    shl64 = run_op(runner, "shl.b64 %d, %a, %b;", "b64", a=("b64", [3] * 4), b=("u32", [1, 63, 64, 100]))
    assert list(shl64) == [6, 1 << 63, 0, 0]
    imm = run_op(runner, "shl.b32 %d, %a, 40;", "b32", a=("b32", [7]))
    assert list(imm) == [0]


def test_neg_and_abs_of_int_min_wrap(runner):
    a = [I32MIN, -5, 5]
    assert list(run_op(runner, "neg.s32 %d, %a;", "s32", a=("s32", a))) == [I32MIN, 5, -5]
    assert list(run_op(runner, "abs.s32 %d, %a;", "s32", a=("s32", a))) == [I32MIN, 5, 5]


def test_high_and_wide_multiplies(runner, rng):
    a = rng.integers(0, 2**64, 64, dtype=np.uint64)
    b = rng.integers(0, 2**64, 64, dtype=np.uint64)
    a[:3] = [2**64 - 1, 2**63, 0]
    b[:3] = [2**64 - 1, 2, 12345]
    hu = run_op(runner, "mul.hi.u64 %d, %a, %b;", "u64", a=("u64", a), b=("u64", b))
    assert [int(x) for x in hu] == [(int(x) * int(y)) >> 64 for x, y in zip(a, b)]
    sa, sb = a.view(np.int64), b.view(np.int64)
    hs = run_op(runner, "mul.hi.s64 %d, %a, %b;", "s64", a=("s64", sa), b=("s64", sb))
    assert [int(x) for x in hs] == [(int(x) * int(y)) >> 64 for x, y in zip(sa, sb)]
    a32 = a.astype(np.uint32).view(np.int32)
    b32 = b.astype(np.uint32).view(np.int32)
    h32 = run_op(runner, "mul.hi.s32 %d, %a, %b;", "s32", a=("s32", a32), b=("s32", b32))
    assert [int(x) for x in h32] == [(int(x) * int(y)) >> 32 for x, y in zip(a32, b32)]
    w = run_op(runner, "mul.wide.s32 %d, %a, %b;", "s64", a=("s32", a32), b=("s32", b32))
    assert [int(x) for x in w] == [int(x) * int(y) for x, y in zip(a32, b32)]
    c = b32
    mh = run_op(runner, "mad.hi.u32 %d, %a, %b, %c;", "u32", a=("u32", a32.view(np.uint32)),
                b=("u32", b32.view(np.uint32)), c=("u32", c.view(np.uint32)))
    ref = [((int(x) * int(y) >> 32) + int(z)) & 0xFFFFFFFF for x, y, z in
           zip(a32.view(np.uint32), b32.view(np.uint32), c.view(np.uint32))]
    assert [int(x) for x in mh] == ref


def test_carry_chain_adds_64_bit_numbers_from_32_bit_halves(runner, rng):
    a = rng.integers(0, 2**64, 32, dtype=np.uint64)
    b = rng.integers(0, 2**64, 32, dtype=np.uint64)
    a[0], b[0] = 2**64 - 1, 1
    body = """
    .reg .b32 %alo, %ahi, %blo, %bhi, %lo, %hi;
    mov.b64 {%alo, %ahi}, %a;
    mov.b64 {%blo, %bhi}, %b;
    add.cc.u32 %lo, %alo, %blo;
    addc.u32 %hi, %ahi, %bhi;
    mov.b64 %d, {%lo, %hi};
    """
    out = run_op(runner, body, "b64", a=("b64", a), b=("b64", b))
    assert np.array_equal(out, a + b)
    body_sub = body.replace("add.cc.u32", "sub.cc.u32").replace("addc.u32", "subc.u32")
    out = run_op(runner, body_sub, "b64", a=("b64", a), b=("b64", b))
    assert np.array_equal(out, a - b)


def test_bit_counting_and_reversal(runner):
    v = [0, 1, 0x80000000, 0xFFFFFFFF, 0x00F0F000]
    assert list(run_op(runner, "popc.b32 %d, %a;", "u32", a=("b32", v))) == [0, 1, 1, 32, 8]
    assert list(run_op(runner, "clz.b32 %d, %a;", "u32", a=("b32", v))) == [32, 31, 0, 0, 8]
    assert list(run_op(runner, "brev.b32 %d, %a;", "b32", a=("b32", v))) == [0, 0x80000000, 1, 0xFFFFFFFF, 0x000F0F00]
    assert list(run_op(runner, "bfind.u32 %d, %a;", "u32", a=("u32", v))) == [0xFFFFFFFF, 0, 31, 31, 23]
    assert list(run_op(runner, "bfind.s32 %d, %a;", "u32", a=("s32", [-1, -2, 5, 0]))) == [0xFFFFFFFF, 0, 2,
                                                                                             0xFFFFFFFF]
    assert list(run_op(runner, "bfind.shiftamt.u32 %d, %a;", "u32", a=("u32", [1, 0x80000000]))) == [31, 0]
    v64 = [0, 2**64 - 1, 2**40]
    assert list(run_op(runner, "popc.b64 %d, %a;", "u32", a=("b64", v64))) == [0, 64, 1]
    assert list(run_op(runner, "clz.b64 %d, %a;", "u32", a=("b64", v64))) == [64, 0, 23]


def test_bit_field_extract_and_insert(runner):
    a = [0xF0F0_1234] * 6
    pos = [0, 4, 28, 30, 40, 8]
    ln = [8, 8, 8, 0, 4, 40]
    u = run_op(runner, "bfe.u32 %d, %a, %b, %c;", "u32", a=("u32", a), b=("u32", pos), c=("u32", ln))
    assert list(u) == [0x34, 0x23, 0xF, 0, 0, 0xF0F012]
    s = run_op(runner, "bfe.s32 %d, %a, %b, %c;", "s32", a=("s32", np.array(a, np.uint32).view(np.int32)),
               b=("u32", pos), c=("u32", ln))
    assert list(s) == [0x34, 0x23, -1, 0, -1, np.int32(np.uint32(0xFFF0F012).view(np.int32))]
    bi = run_op(runner, "bfi.b32 %d, %a, %b, %c, 8;", "b32", a=("b32", [0xAB] * 3), b=("b32", [0xFFFFFFFF] * 3),
                c=("u32", [0, 28, 40]))
    assert list(bi) == [0xFFFFFFAB, 0xBFFFFFFF, 0xFFFFFFFF]


def test_byte_permute(runner):
    a = [0x33221100] * 4
    b = [0x77665544] * 4
    sel = [0x3210, 0x7654, 0x0123, 0x8888]
    out = run_op(runner, "prmt.b32 %d, %a, %b, %c;", "b32", a=("b32", a), b=("b32", b), c=("b32", sel))
    # selector 8: byte 0 with its sign bit replicated (0x00 -> 0x00)
    assert list(out) == [0x33221100, 0x77665544, 0x00112233, 0x00000000]
    out = run_op(runner, "prmt.b32 %d, %a, %b, %c;", "b32", a=("b32", [0x000000F0]), b=("b32", [0]),
                 c=("b32", [0x8880]))
    assert list(out) == [0xFFFFFFF0]


def test_lop3_lookup_tables(runner, rng):
    a, b, c = (rng.integers(0, 2**32, 16, dtype=np.uint32) for _ in range(3))
    xor3 = run_op(runner, "lop3.b32 %d, %a, %b, %c, 0x96;", "b32", a=("b32", a), b=("b32", b), c=("b32", c))
    assert np.array_equal(xor3, a ^ b ^ c)
    maj = run_op(runner, "lop3.b32 %d, %a, %b, %c, 0xE8;", "b32", a=("b32", a), b=("b32", b), c=("b32", c))
    assert np.array_equal(maj, (a & b) | (a & c) | (b & c))


def test_funnel_shifts(runner):
    lo = [0x89ABCDEF] * 4
    hi = [0x01234567] * 4
    n = [4, 36, 0, 40]
    left = run_op(runner, "shf.l.wrap.b32 %d, %a, %b, %c;", "b32", a=("b32", lo), b=("b32", hi), c=("u32", n))
    assert list(left) == [0x12345678, 0x12345678, 0x01234567, 0x23456789]
    right = run_op(runner, "shf.r.clamp.b32 %d, %a, %b, %c;", "b32", a=("b32", lo), b=("b32", hi), c=("u32", n))
    assert list(right) == [0x789ABCDE, 0x01234567, 0x89ABCDEF, 0x01234567]


# ---- conversions --------------------------------------------------------------------------------
def test_float_to_int_conversions_saturate_and_nan_gives_zero(runner):
    x = [NAN, 3e9, -3e9, 2.5, 3.5, -2.5, -0.0, INF]
    assert list(run_op(runner, "cvt.rni.s32.f32 %d, %a;", "s32", a=("f32", x))) == [0, I32MAX, I32MIN, 2, 4, -2, 0,
                                                                                     I32MAX]
    assert list(run_op(runner, "cvt.rzi.u32.f32 %d, %a;", "u32", a=("f32", [-5.7, 4.9e9, NAN, 7.9]))) == \
        [0, 0xFFFFFFFF, 0, 7]
    assert list(run_op(runner, "cvt.rmi.s64.f64 %d, %a;", "s64", a=("f64", [-0.5, 1e30, -1e30]))) == \
        [-1, 2**63 - 1, -(2**63)]


def test_int_to_int_truncation_and_saturation(runner):
    v = [300, -300, -5, 127]
    assert list(run_op(runner, "cvt.s8.s32 %d, %a;", "s8", a=("s32", v))) == [44, -44, -5, 127]
    assert list(run_op(runner, "cvt.sat.s8.s32 %d, %a;", "s8", a=("s32", v))) == [127, -128, -5, 127]
    assert list(run_op(runner, "cvt.sat.u8.s32 %d, %a;", "u8", a=("s32", v))) == [255, 0, 0, 127]
    assert list(run_op(runner, "cvt.s64.s32 %d, %a;", "s64", a=("s32", v))) == v
    assert list(run_op(runner, "cvt.u64.u32 %d, %a;", "u64", a=("u32", [0xFFFFFFFF]))) == [0xFFFFFFFF]


def test_float_conversions_with_rounding_saturation_and_half(runner):
    assert list(run_op(runner, "cvt.sat.f32.f32 %d, %a;", "f32", a=("f32", [1.5, -0.5, NAN, 0.25]))) == \
        [1.0, 0.0, 0.0, 0.25]
    x = [1.7, -1.2, 2.5, -2.5]
    assert list(run_op(runner, "cvt.rmi.f32.f32 %d, %a;", "f32", a=("f32", x))) == [1, -2, 2, -3]
    assert list(run_op(runner, "cvt.rpi.f32.f32 %d, %a;", "f32", a=("f32", x))) == [2, -1, 3, -2]
    assert list(run_op(runner, "cvt.rni.f32.f32 %d, %a;", "f32", a=("f32", x))) == [2, -1, 2, -2]
    h = [1 / 3, 65520.0, -2.0, 1e-8]
    half = run_op(runner, "cvt.rn.f16.f32 %d, %a;", "b16", a=("f32", h))
    with np.errstate(over="ignore"):      # 65520 rounds to +inf in half precision
        ref_half = np.array(h, np.float32).astype(np.float16).view(np.uint16)
        ref_f32 = np.array(d := [1e300, 1 + 2**-30]).astype(np.float32)
    assert np.array_equal(half, ref_half)
    back = run_op(runner, "cvt.f32.f16 %d, %a;", "f32", a=("b16", half))
    assert np.array_equal(back, half.view(np.float16).astype(np.float32))
    assert np.array_equal(run_op(runner, "cvt.rn.f32.f64 %d, %a;", "f32", a=("f64", d)), ref_f32)
    rz = run_op(runner, "cvt.rz.f32.f64 %d, %a;", "f32", a=("f64", [1 + 2**-24 + 2**-30, -(1 + 2**-24 + 2**-30)]))
    assert list(rz) == [1.0, -1.0]


# ---- floating point -----------------------------------------------------------------------------
def test_min_max_ignore_nan_and_order_signed_zeros(runner):
    a = [NAN, 1.0, -0.0, 0.0, NAN]
    b = [1.0, NAN, 0.0, -0.0, NAN]
    mn = run_op(runner, "min.f32 %d, %a, %b;", "f32", a=("f32", a), b=("f32", b))
    mx = run_op(runner, "max.f32 %d, %a, %b;", "f32", a=("f32", a), b=("f32", b))
    assert list(mn[:2]) == [1.0, 1.0] and list(mx[:2]) == [1.0, 1.0]
    assert np.signbit(mn[2]) and np.signbit(mn[3])
    assert not np.signbit(mx[2]) and not np.signbit(mx[3])
    assert np.isnan(mn[4]) and np.isnan(mx[4])
    mnn = run_op(runner, "min.NaN.f32 %d, %a, %b;", "f32", a=("f32", a), b=("f32", b))
    assert np.isnan(mnn[0]) and np.isnan(mnn[1])


@pytest.mark.parametrize("cmp,expect", [("lt", [0, 1, 0, 0]), ("ltu", [1, 1, 0, 1]), ("ne", [0, 1, 0, 0]),
                                        ("neu", [1, 1, 0, 1]), ("nan", [1, 0, 0, 1]), ("num", [0, 1, 1, 0]),
                                        ("ge", [0, 0, 1, 0]), ("equ", [1, 0, 1, 1])])
def test_ordered_and_unordered_comparisons(runner, cmp, expect):
    a = [NAN, 1.0, 0.0, 2.0]
    b = [1.0, 2.0, -0.0, NAN]
    out = run_op(runner, f"setp.{cmp}.f32 %q1, %a, %b;\nselp.u32 %d, 1, 0, %q1;", "u32", a=("f32", a), b=("f32", b))
    assert list(out) == expect


def test_setp_with_boolean_combination_and_pair_destination(runner):
    body = """
    setp.gt.and.s32 %q1|%q2, %a, %b, %q3;
    selp.u32 %d, 1, 0, %q1;
    selp.u32 %cc_tmp, 2, 0, %q2;
    or.b32 %d, %d, %cc_tmp;
    """
    body = "setp.ne.s32 %q3, %c, 0;\n" + body
    out = run_op(runner, body, "u32", a=("s32", [5, 1, 5, 1]), b=("s32", [1, 5, 1, 5]), c=("s32", [1, 1, 0, 0]))
    assert list(out) == [1, 2, 0, 0]


def test_testp_classifies_floats(runner):
    x = [1.0, 1e-40, 0.0, INF, NAN]
    for what, expect in [("finite", [1, 1, 1, 0, 0]), ("infinite", [0, 0, 0, 1, 0]), ("notanumber", [0, 0, 0, 0, 1]),
                         ("normal", [1, 0, 0, 0, 0]), ("subnormal", [0, 1, 0, 0, 0]), ("number", [1, 1, 1, 1, 0])]:
        out = run_op(runner, f"testp.{what}.f32 %q1, %a;\nselp.u32 %d, 1, 0, %q1;", "u32", a=("f32", x))
        assert list(out) == expect, what


def test_copysign_and_flush_to_zero(runner):
    out = run_op(runner, "copysign.f32 %d, %a, %b;", "f32", a=("f32", [-1.0, 1.0, -0.0]), b=("f32", [2.0, -3.0, 4.0]))
    assert list(out) == [-2.0, 3.0, -4.0]
    ftz = run_op(runner, "add.ftz.f32 %d, %a, %b;", "f32", a=("f32", [1e-40, -1e-40, 1.0]), b=("f32", [0.0, -0.0, 0.0]))
    assert list(ftz) == [0.0, 0.0, 1.0] and np.signbit(ftz[1])
    ex = run_op(runner, "ex2.approx.ftz.f32 %d, %a;", "f32", a=("f32", [-130.0, 1.0, 0.5]))
    assert ex[0] == 0.0 and ex[1] == 2.0 and abs(ex[2] - np.sqrt(np.float32(2))) <= np.spacing(np.float32(1.5))


def test_float_special_values(runner):
    r = run_op(runner, "rcp.rn.f32 %d, %a;", "f32", a=("f32", [0.0, -0.0, INF, 4.0]))
    assert list(r) == [INF, -INF, 0.0, 0.25]
    s = run_op(runner, "sqrt.rn.f32 %d, %a;", "f32", a=("f32", [-1.0, 4.0, INF, -0.0]))
    assert np.isnan(s[0]) and list(s[1:3]) == [2.0, INF] and np.signbit(s[3])
    d = run_op(runner, "div.rn.f32 %d, %a, %b;", "f32", a=("f32", [1.0, 0.0, -1.0]), b=("f32", [3.0, 0.0, 0.0]))
    assert d[0] == np.float32(1) / np.float32(3) and np.isnan(d[1]) and d[2] == -INF


def _round_f32_exact(q: Fraction) -> float:
    """Round an exact rational to the nearest float32 (ties to even)."""
    r = np.float32(float(q))
    best = None
    for cand in (np.nextafter(r, np.float32(-INF)), r, np.nextafter(r, np.float32(INF))):
        if not np.isfinite(cand):
            continue
        dist = abs(Fraction(float(cand)) - q)
        key = (dist, int(np.array(cand).view(np.uint32)) & 1)
        if best is None or key < best[0]:
            best = (key, cand)
    return best[1]


def test_fma_f32_is_single_rounded(runner, rng):
    n = 256
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    c = (-(a.astype(np.float64) * b.astype(np.float64))).astype(np.float32)   # heavy cancellation
    c[::2] = rng.standard_normal(n // 2).astype(np.float32)
    # a product exactly halfway between two floats after adding c: double rounding would go wrong
    a[0], b[0], c[0] = np.float32(1 + 2**-12), np.float32(1 + 2**-12), np.float32(2**-48)
    out = run_op(runner, "fma.rn.f32 %d, %a, %b, %c;", "f32", a=("f32", a), b=("f32", b), c=("f32", c))
    ref = [_round_f32_exact(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z))) for x, y, z in zip(a, b, c)]
    assert np.array_equal(bits(out), bits(np.array(ref, np.float32)))


def test_fma_f64_is_single_rounded(runner, rng):
    n = 256
    a = rng.standard_normal(n) * 1e3
    b = rng.standard_normal(n) * 1e-3
    c = -(a * b)
    c[::3] = rng.standard_normal(len(c[::3]))
    a[0], b[0], c[0] = 1e300, 1e10, -1e308       # product overflows in plain arithmetic, fma does not
    out = run_op(runner, "fma.rn.f64 %d, %a, %b, %c;", "f64", a=("f64", a), b=("f64", b), c=("f64", c))
    ref = []
    for x, y, z in zip(a, b, c):
        try:
            ref.append(float(Fraction(x) * Fraction(y) + Fraction(z)))
        except OverflowError:
            ref.append(INF if Fraction(x) * Fraction(y) + Fraction(z) > 0 else -INF)
    assert np.array_equal(bits(out[1:]), bits(np.array(ref[1:])))
    assert out[0] == INF    # 1e310 - 1e308 overflows


def test_bit_mask_generation(runner):
    a = [0, 4, 30, 40, 0]
    b = [8, 8, 8, 8, 40]
    out = run_op(runner, "bmsk.clamp.b32 %d, %a, %b;", "b32", a=("u32", a), b=("u32", b))
    assert list(out) == [0xFF, 0xFF0, 0xC0000000, 0, 0xFFFFFFFF]
    out = run_op(runner, "bmsk.wrap.b32 %d, %a, %b;", "b32", a=("u32", [36]), b=("u32", [36]))
    assert list(out) == [0xF0]


def test_packed_half_arithmetic(runner, rng):
    a = rng.uniform(-50, 50, 64).astype(np.float16)
    b = rng.uniform(-4, 4, 64).astype(np.float16)
    c = rng.uniform(-4, 4, 64).astype(np.float16)
    pa, pb, pc = (x.view(np.uint32) for x in (a, b, c))      # pairs of halves in one register
    add = run_op(runner, "add.f16x2 %d, %a, %b;", "b32", a=("b32", pa), b=("b32", pb))
    assert np.array_equal(add.view(np.float16), (a + b).astype(np.float16))
    fma = run_op(runner, "fma.rn.f16x2 %d, %a, %b, %c;", "b32", a=("b32", pa), b=("b32", pb), c=("b32", pc))
    exact = a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)
    assert np.array_equal(fma.view(np.float16), exact.astype(np.float16))
    packed = run_op(runner, "cvt.rn.f16x2.f32 %d, %a, %b;", "b32", a=("f32", [1.5, -2.0]), b=("f32", [0.25, 65536.0]))
    halves = packed.view(np.float16).reshape(2, 2)
    assert list(halves[0]) == [0.25, 1.5] and halves[1][0] == np.inf and halves[1][1] == -2.0


def test_bfloat16_arithmetic_rounds_to_nearest_even(runner):
    def bf(x):
        b = np.array(x, np.float32).view(np.uint32)
        return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)
    a = bf([1.0, 3.0, -2.5])
    b = bf([2.0**-8, 1.0, 0.5])
    out = run_op(runner, "add.rn.bf16 %d, %a, %b;", "b16", a=("b16", a), b=("b16", b))
    back = (out.astype(np.uint32) << 16).view(np.float32)
    assert list(back) == [1.0, 4.0, -2.0]     # 1 + 2**-8 is a tie: rounds to even (1.0)
