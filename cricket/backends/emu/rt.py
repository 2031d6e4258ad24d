"""Run-time helpers the generated block code calls: register file access and exact PTX semantics.

Everything here works on NumPy arrays (one element per lane) and on NumPy scalars (a value uniform
over the lanes), and returns the same kind it got.
"""
from __future__ import annotations

import numpy as np

ndarray = np.ndarray
u8, s8, u16, s16, u32, s32, u64, s64 = np.uint8, np.int8, np.uint16, np.int16, np.uint32, np.int32, np.uint64, np.int64
f16, f32, f64 = np.float16, np.float32, np.float64

UNSIGNED = {1: u8, 2: u16, 4: u32, 8: u64}
SIGNED = {1: s8, 2: s16, 4: s32, 8: s64}
FLT_MIN32 = np.float32(1.1754943508222875e-38)
FLT_MIN64 = np.float64(2.2250738585072014e-308)


# ---- register file ----------------------------------------------------------------------------
def get(R, name, L, zero):
    """Read register ``name`` for lanes ``L`` (None: all lanes of the batch)."""
    v = R.get(name, zero)
    if L is None or type(v) is not ndarray:
        return v
    return v[L]


def put(X, name, L, v, dtype):
    """Write ``v`` into register ``name`` for lanes ``L`` (not None), keeping the other lanes."""
    R = X.R
    a = R.get(name)
    if type(a) is not ndarray or name not in X.O:
        b = np.empty(X.N, dtype)
        b[...] = 0 if a is None else a
        R[name] = a = b
        X.O.add(name)
    a[L] = v


def sel(p, a, b):
    """Per-lane choice: ``a`` where ``p`` else ``b`` (always a new array or a scalar)."""
    if type(p) is ndarray:
        return np.where(p, a, b)
    if type(a) is ndarray or type(b) is ndarray:
        return np.where(p, a, b)
    return a if p else b


def mask_of(p, n):
    """A guard predicate as an index selector over ``n`` lanes: None (all), False (none) or a bool array."""
    if type(p) is ndarray:
        return p
    return None if p else False


# ---- integer arithmetic -----------------------------------------------------------------------
def mulhi(a, b, dt):
    """High half of the full product of two ``dt`` integers."""
    dt = np.dtype(dt)
    if dt.itemsize <= 4:
        wide = s64 if dt.kind == "i" else u64
        prod = np.asarray(a).astype(wide) * np.asarray(b).astype(wide)
        out = (prod >> (8 * dt.itemsize)).astype(dt)
        return out if out.ndim else out[()]
    # 64 x 64 -> high 64 via 32-bit limbs, unsigned, then the signed correction
    ua = np.asarray(a).view(u64) if np.asarray(a).dtype.itemsize == 8 else np.asarray(a).astype(u64)
    ub = np.asarray(b).view(u64) if np.asarray(b).dtype.itemsize == 8 else np.asarray(b).astype(u64)
    m32 = u64(0xFFFFFFFF)
    a0, a1 = ua & m32, ua >> u64(32)
    b0, b1 = ub & m32, ub >> u64(32)
    p00 = a0 * b0
    p01 = a0 * b1
    p10 = a1 * b0
    p11 = a1 * b1
    mid = (p00 >> u64(32)) + (p01 & m32) + (p10 & m32)
    hi = p11 + (p01 >> u64(32)) + (p10 >> u64(32)) + (mid >> u64(32))
    if dt.kind == "i":
        hi = hi - np.where(np.asarray(a).view(s64) < 0, ub, u64(0)) - np.where(np.asarray(b).view(s64) < 0, ua, u64(0))
        out = hi.view(s64)
    else:
        out = hi
    return out if (type(a) is ndarray or type(b) is ndarray) else out[()]


def add_carry(a, b, cin, dt):
    """a + b + cin in ``dt`` (unsigned) with the carry out (0/1 as u32)."""
    s1 = a + b
    c1 = s1 < a
    s2 = s1 + cin.astype(dt) if type(cin) is ndarray else s1 + dt(cin)
    c2 = s2 < s1
    return s2, (c1 | c2).astype(u32)


def sub_borrow(a, b, bin_, dt):
    t = a - b
    b1 = a < b
    d = t - (bin_.astype(dt) if type(bin_) is ndarray else dt(bin_))
    b2 = t < (bin_.astype(dt) if type(bin_) is ndarray else dt(bin_))
    return d, (b1 | b2).astype(u32)


def _divisor(a, b, dt):
    """Operands of a division as arrays of ``dt``: (dtype, a, where b is 0, b with 0 replaced by 1)."""
    dt = np.dtype(dt)
    a = np.asarray(a, dt)
    b = np.asarray(b, dt)
    zero = b == 0
    return dt, a, zero, np.where(zero, dt.type(1), b)


def idiv(a, b, dt):
    """C-style truncating division; x/0 gives all ones (as the GPU's division sequence does)."""
    dt, a, zero, bs = _divisor(a, b, dt)
    if dt.kind == "u":
        q = a // bs
    else:
        if dt.itemsize < 8:
            q = (a.astype(s64) - np.fmod(a.astype(s64), bs.astype(s64))) // bs.astype(s64)
            q = q.astype(dt)
        else:
            r = np.fmod(a, bs)
            neg1 = bs == -1
            q = np.where(neg1, (-a.view(u64)).view(s64) if a.ndim else np.asarray(-a.view(u64)).view(s64),
                         (a - r) // np.where(neg1, s64(1), bs))
    q = np.where(zero, dt.type(-1) if dt.kind == "i" else np.iinfo(dt).max, q).astype(dt)
    return q if q.ndim else q[()]


def irem(a, b, dt):
    """C-style remainder (sign of the dividend); x%0 gives x."""
    dt, a, zero, bs = _divisor(a, b, dt)
    if dt.kind == "u":
        r = a % bs
    else:
        bs = np.where(bs == -1, dt.type(1), bs)   # x % -1 == 0, and avoids INT_MIN % -1 trapping
        r = np.fmod(a, bs)
    r = np.where(zero, a, r).astype(dt)
    return r if r.ndim else r[()]


def _smear(x, bits):
    x = x | (x >> 1)
    x = x | (x >> 2)
    x = x | (x >> 4)
    x = x | (x >> 8)
    x = x | (x >> 16)
    if bits == 64:
        x = x | (x >> 32)
    return x


def bitlen(x, bits):
    return np.bitwise_count(_smear(x, bits)).astype(u32)


def clz(x, bits):
    return (u32(bits) - bitlen(x, bits)).astype(u32)


def popc(x):
    return np.bitwise_count(x).astype(u32)


def brev(x, bits):
    dt = u32 if bits == 32 else u64
    x = np.asarray(x).astype(dt)
    masks = [(1, 0x5555555555555555), (2, 0x3333333333333333), (4, 0x0F0F0F0F0F0F0F0F),
             (8, 0x00FF00FF00FF00FF), (16, 0x0000FFFF0000FFFF), (32, 0x00000000FFFFFFFF)]
    full = (1 << bits) - 1
    for sh, m in masks:
        if sh >= bits:
            break
        m &= full
        x = ((x >> dt(sh)) & dt(m)) | ((x & dt(m)) << dt(sh))
    return x if x.ndim else x[()]


def bfind(x, bits, signed, shiftamt):
    ux = np.asarray(x)
    if signed:
        ux = np.where(ux < 0, ~ux, ux)
    ux = ux.astype(u64) if bits == 64 else ux.astype(u32)
    n = bitlen(ux, bits).astype(np.int64) - 1
    if shiftamt:
        n = np.where(n < 0, -1, bits - 1 - n)
    out = np.where(n < 0, u32(0xFFFFFFFF), n.astype(np.int64) & 0xFFFFFFFF).astype(u32)
    return out if out.ndim else out[()]


def bfe(a, pos, ln, bits, signed):
    ua = np.asarray(a).astype(UNSIGNED[bits // 8]).astype(u64) if np.asarray(a).dtype.kind != "u" or bits < 64 \
        else np.asarray(a)
    if bits == 64:
        ua = np.asarray(a).view(u64) if np.asarray(a).dtype.itemsize == 8 else ua
    pos = np.asarray(pos).astype(s64) & 0xFF
    ln = np.asarray(ln).astype(s64) & 0xFF
    posc = np.minimum(pos, bits)
    v = np.where(posc >= 64, u64(0), ua >> np.minimum(posc, 63).astype(u64))
    leff = np.clip(np.minimum(ln, bits - posc), 0, 64)
    mask = np.where(leff >= 64, u64(0xFFFFFFFFFFFFFFFF), (u64(1) << np.minimum(leff, 63).astype(u64)) - u64(1))
    res = v & mask
    if signed:
        sidx = np.clip(np.minimum(pos + ln - 1, bits - 1), 0, 63)
        sbit = np.where(ln == 0, u64(0), (ua >> sidx.astype(u64)) & u64(1))
        res = np.where(sbit == 1, res | ~mask, res)
        out = res.astype(u64).astype(UNSIGNED[bits // 8]).view(SIGNED[bits // 8])
    else:
        out = res.astype(UNSIGNED[bits // 8])
    return out if out.ndim else out[()]


def bfi(f, b, pos, ln, bits):
    dt = UNSIGNED[bits // 8]
    f = np.asarray(f).astype(dt)
    b = np.asarray(b).astype(dt)
    pos = np.asarray(pos).astype(s64) & 0xFF
    ln = np.asarray(ln).astype(s64) & 0xFF
    end = np.minimum(pos + ln, bits)
    posc = np.minimum(pos, bits)
    width = end - posc
    ones = np.where(width >= 64, u64(0xFFFFFFFFFFFFFFFF), (u64(1) << np.minimum(width, 63).astype(u64)) - u64(1))
    m = np.where(posc >= bits, u64(0), ones << np.minimum(posc, 63).astype(u64)).astype(dt)
    fs = np.where(posc >= bits, dt(0), f.astype(u64) << np.minimum(posc, 63).astype(u64)).astype(dt)
    out = ((b & ~m) | (fs & m)).astype(dt)
    return out if out.ndim else out[()]


def bmsk(a, b, clamp):
    """bmsk: a mask of ``b`` one-bits starting at bit ``a`` (operands clamped to 32, or taken mod 32)."""
    a = np.asarray(a).astype(u64)
    b = np.asarray(b).astype(u64)
    if clamp:
        a = np.minimum(a, u64(32))
        b = np.minimum(b, u64(32))
    else:
        a = a & u64(31)
        b = b & u64(31)
    ones = (u64(1) << b) - u64(1)
    out = ((ones << a) & u64(0xFFFFFFFF)).astype(u32)
    return out if out.ndim else out[()]


def szext(a, b, clamp, signed):
    """szext: keep the low ``b`` bits of ``a``, sign- or zero-extended."""
    n = np.asarray(b).astype(s64)
    n = np.minimum(n, 32) if clamp else n & 31
    ua = np.asarray(a).astype(u32).astype(u64)
    keep = np.where(n >= 32, u64(0xFFFFFFFF), (u64(1) << n.astype(u64)) - u64(1))
    v = ua & keep
    if signed:
        sign = np.where(n == 0, u64(0), (v >> np.maximum(n - 1, 0).astype(u64)) & u64(1))
        v = np.where((sign == 1) & (n < 32), v | (~keep & u64(0xFFFFFFFF)), v)
        out = v.astype(u32).view(s32)
    else:
        out = v.astype(u32)
    return out if out.ndim else out[()]


def prmt(a, b, c, mode):
    a = np.asarray(a).astype(u64)
    b = np.asarray(b).astype(u64)
    c = np.asarray(c).astype(u64)
    src = a | (b << u64(32))                       # bytes 0..7
    if mode == "":
        sels = [(c >> u64(4 * i)) & u64(0xF) for i in range(4)]
    else:
        s = c & u64(3)
        if mode == "f4e":
            sels = [(s + u64(i)) & u64(7) for i in range(4)]
        elif mode == "b4e":
            sels = [(s + u64(8 - i)) & u64(7) for i in range(4)]
        elif mode == "rc8":
            sels = [s] * 4
        elif mode == "rc16":
            s1 = (c & u64(1)) * u64(2)
            sels = [s1, s1 + u64(1), s1, s1 + u64(1)]
        elif mode == "ecl":
            sels = [np.where(u64(i) < s, s, u64(i)) for i in range(4)]
        elif mode == "ecr":
            sels = [np.where(u64(i) > s, s, u64(i)) for i in range(4)]
        else:
            raise ValueError(mode)
    out = u64(0)
    for i, sel_ in enumerate(sels):
        byte = (src >> ((sel_ & u64(7)) * u64(8))) & u64(0xFF)
        if mode == "":
            sign = ((byte >> u64(7)) & u64(1)) * u64(0xFF)
            byte = np.where((sel_ & u64(8)) != 0, sign, byte)
        out = out | (byte << u64(8 * i))
    out = np.asarray(out).astype(u32)
    return out if out.ndim else out[()]


def shf(a, b, c, left, clamp):
    v = (np.asarray(b).astype(u64) << u64(32)) | np.asarray(a).astype(u64)
    n = np.asarray(c).astype(u64)
    n = np.minimum(n, u64(32)) if clamp else n & u64(31)
    out = ((v << n) >> u64(32)) if left else (v >> n)
    out = (out & u64(0xFFFFFFFF)).astype(u32)
    return out if out.ndim else out[()]


def shl(a, n, bits):
    dt = np.asarray(a).dtype
    n = np.minimum(np.asarray(n).astype(u64), u64(bits)).astype(dt)
    out = np.left_shift(a, n)
    return out


def shr(a, n, bits):
    dt = np.asarray(a).dtype
    n = np.minimum(np.asarray(n).astype(u64), u64(bits)).astype(dt)
    return np.right_shift(a, n)


def sat_int(x, dt):
    """Clamp a wide integer or float result into the range of ``dt``."""
    info = np.iinfo(dt)
    return np.clip(x, info.min, info.max).astype(dt)


def simd16x2(op, a, b, signed, relu):
    """add/sub/min/max on .s16x2/.u16x2: each 16-bit half of the 32-bit operands on its own.

    Sums and differences wrap within the half; ``relu`` (s16x2 only) clamps a negative half to 0.
    """
    scalar = type(a) is not ndarray and type(b) is not ndarray
    n = max(np.size(a), np.size(b))
    ht = s16 if signed else u16
    av = np.ascontiguousarray(np.broadcast_to(np.asarray(a, u32), (n,))).view(ht)
    bv = np.ascontiguousarray(np.broadcast_to(np.asarray(b, u32), (n,))).view(ht)
    if op == "add":
        r = av + bv
    elif op == "sub":
        r = av - bv
    elif op == "min":
        r = np.minimum(av, bv)
    elif op == "max":
        r = np.maximum(av, bv)
    else:
        raise ValueError(op)
    if relu:
        r = np.maximum(r, ht(0))
    out = r.view(u32)
    return out[0] if scalar else out


def video_primary(op, x, y, cmp=None):
    """The primary operation of a video instruction on extended values (``set``: 0 or 1)."""
    if op == "add":
        return x + y
    if op == "sub":
        return x - y
    if op == "absdiff":
        return np.abs(x - y)
    if op == "min":
        return np.minimum(x, y)
    if op == "max":
        return np.maximum(x, y)
    if op == "set":
        return {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y}[cmp] * 1
    raise ValueError(op)


def video_simd(op, lanes, a, b, c, a_signed, b_signed, d_signed, sat, accumulate, mask, asel, bsel, cmp=None):
    """The SIMD video instructions (vadd2 ... vset4): ``lanes`` (2 or 4) half-words or bytes.

    Each source element is picked from the eight bytes (four half-words) of ``b:a`` by ``asel``/
    ``bsel`` (element indices, element 0 first) and sign- or zero-extended by its operand's type;
    the operation works on the wide values. ``sat`` clamps to the element range of the destination
    type. Merge (``accumulate`` false): the elements in ``mask`` take the results (truncated), the
    others ``c``'s. Accumulate: ``d = c +`` the results in ``mask``, modulo 2**32.
    """
    scalar = type(a) is not ndarray and type(b) is not ndarray and type(c) is not ndarray
    bits = 32 // lanes
    keep = (1 << bits) - 1
    wide = np.asarray(a, u32).astype(s64) | (np.asarray(b, u32).astype(s64) << 32)
    cv = np.asarray(c, u32).astype(s64)

    def element(source, index, signed):
        v = (source >> (index * bits)) & keep
        return np.where(v >> (bits - 1) == 1, v - (1 << bits), v) if signed else v

    out = cv if accumulate else np.zeros_like(cv)
    for i in range(lanes):
        x, y = element(wide, asel[i], a_signed), element(wide, bsel[i], b_signed)
        if op == "avrg":                        # rounds halves away from zero
            total = x + y
            t = np.where(total >= 0, (total + 1) >> 1, total >> 1)
        else:
            t = np.asarray(video_primary(op, x, y, cmp)).astype(s64)
        if sat:
            lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if d_signed else (0, keep)
            t = np.clip(t, lo, hi)
        if accumulate:
            if i in mask:
                out = out + t
        else:
            part = t if i in mask else element(cv, i, False)
            out = out | ((part & keep) << (i * bits))
    res = (out & 0xFFFFFFFF).astype(u32)
    return res[()] if scalar else res


# ---- floating point ---------------------------------------------------------------------------
def ftz(x):
    """Flush subnormal values to sign-preserving zero (the .ftz modifier)."""
    x = np.asarray(x)
    lim = FLT_MIN32 if x.dtype == f32 else FLT_MIN64
    out = np.where(np.abs(x) < lim, x * x.dtype.type(0), x)
    return out if out.ndim else out[()]


def sat01(x):
    out = np.where(x > 0, np.minimum(x, np.asarray(x).dtype.type(1)), np.asarray(x).dtype.type(0))
    return out if out.ndim else out[()]


def _two_sum(a, b):
    s = a + b
    bb = s - a
    err = (a - (s - bb)) + (b - bb)
    return s, err


_SPLIT = f64(134217729.0)  # 2**27 + 1


def _two_prod(a, b):
    p = a * b
    # Veltkamp splitting; scaled to stay away from overflow for large magnitudes
    big = (np.abs(a) > 1e150) | (np.abs(b) > 1e150)
    sa = np.where(big, a * 2.0 ** -60, a)
    sb = np.where(big, b * 2.0 ** -60, b)
    t = _SPLIT * sa
    ah = t - (t - sa)
    al = sa - ah
    t = _SPLIT * sb
    bh = t - (t - sb)
    bl = sb - bh
    ps = sa * sb
    err = ((ah * bh - ps) + ah * bl + al * bh) + al * bl
    err = np.where(big, err * 2.0 ** 120, err)
    return p, err


def _round_odd_add(x, y):
    """x + y rounded to odd (the sticky rounding that makes a following rounding exact)."""
    s, e = _two_sum(x, y)
    bits = np.asarray(s).view(u64)
    even = (bits & u64(1)) == 0
    adj = even & (e != 0) & np.isfinite(s)
    toward = np.where(e > 0, np.inf, -np.inf)
    return np.where(adj, np.nextafter(s, toward), s)


def fma32(a, b, c, rnd="rn"):
    """Single-rounded f32 fused multiply-add.

    The product is exact in f64; the f64 sum is rounded once more to f32, which can only go wrong
    (double rounding) when the f64 sum lands exactly on an f32 halfway point or in the subnormal
    range: those lanes are redone with the sum rounded to odd, which makes the second rounding exact.
    """
    a64 = np.asarray(a, f64)
    b64 = np.asarray(b, f64)
    c64 = np.asarray(c, f64)
    with np.errstate(all="ignore"):
        p = a64 * b64
        s = p + c64
        if rnd in ("rn", ""):
            low = s.view(u64) & u64(0x1FFFFFFF)
            need = (low == u64(0x10000000)) | ((np.abs(s) < 1.1754943508222875e-38) & (s != 0))
            if need.any():
                fixed = _round_odd_add(p, c64)
                fixed = np.where(np.isfinite(p) & np.isfinite(c64), fixed, s)
                s = np.where(need, fixed, s)
            out = s.astype(f32)
        else:
            s = _round_odd_add(p, c64)
            s = np.where(np.isfinite(p) & np.isfinite(c64), s, p + c64)
            out = round_f32(s, rnd)
    return out if out.ndim else out[()]


def round_f32(x64, rnd="rn"):
    r = np.asarray(x64).astype(f32)
    if rnd in ("rn", ""):
        return r
    back = r.astype(f64)
    x64 = np.asarray(x64)
    if rnd == "rz":
        fix = np.abs(back) > np.abs(x64)
        return np.where(fix, np.nextafter(r, f32(0)), r).astype(f32)
    if rnd == "rm":
        return np.where(back > x64, np.nextafter(r, f32(-np.inf)), r).astype(f32)
    if rnd == "rp":
        return np.where(back < x64, np.nextafter(r, f32(np.inf)), r).astype(f32)
    return r


def fma64(a, b, c, rnd="rn"):
    """f64 fused multiply-add by error-free transformations with round-to-odd (Boldo-Melquiond)."""
    a = np.asarray(a, f64)
    b = np.asarray(b, f64)
    c = np.asarray(c, f64)
    with np.errstate(all="ignore"):
        uh, ul = _two_prod(a, b)
        th, tl = _two_sum(c, uh)
        v = _round_odd_add(tl, ul)
        r = th + v
        plain = a * b + c
        ok = np.isfinite(uh) & np.isfinite(c) & np.isfinite(r) & (uh != 0)
        out = np.where(ok, r, plain)
        out = np.where((a == 0) | (b == 0), a * b + c, out)
    return out if out.ndim else out[()]


def fmin(a, b, nan=False):
    with np.errstate(invalid="ignore"):
        r = np.minimum(a, b) if nan else np.fmin(a, b)
        z = (a == 0) & (b == 0)
        r = np.where(z, np.where(np.signbit(a), a, b), r)
    return r if np.ndim(r) else r[()]


def fmax(a, b, nan=False):
    with np.errstate(invalid="ignore"):
        r = np.maximum(a, b) if nan else np.fmax(a, b)
        z = (a == 0) & (b == 0)
        r = np.where(z, np.where(np.signbit(a), b, a), r)
    return r if np.ndim(r) else r[()]


def testp(x, what):
    if what == "finite":
        return np.isfinite(x)
    if what == "infinite":
        return np.isinf(x)
    if what == "number":
        return ~np.isnan(x)
    if what == "notanumber":
        return np.isnan(x)
    lim = FLT_MIN32 if np.asarray(x).dtype == f32 else FLT_MIN64
    ax = np.abs(x)
    if what == "normal":
        return np.isfinite(x) & (ax >= lim)
    if what == "subnormal":
        return (ax < lim) & (ax > 0)
    raise ValueError(what)


# ---- conversions ------------------------------------------------------------------------------
def _round_int(x, rnd):
    if rnd in ("rni", "rn"):
        return np.rint(x)
    if rnd in ("rzi", "rz", ""):
        return np.trunc(x)
    if rnd in ("rmi", "rm"):
        return np.floor(x)
    if rnd in ("rpi", "rp"):
        return np.ceil(x)
    return np.trunc(x)


def f2i(x, dt, rnd):
    """Float to integer: round as asked, saturate to the range, NaN gives 0 (PTX cvt semantics)."""
    x = np.asarray(x).astype(f64) if np.asarray(x).dtype != f64 else np.asarray(x)
    info = np.iinfo(dt)
    with np.errstate(invalid="ignore"):
        r = _round_int(x, rnd)
        r = np.where(np.isnan(r), 0.0, r)
        hi = float(info.max)
        lo = float(info.min)
        big = r >= hi
        small = r <= lo
        safe = np.clip(r, lo, np.nextafter(hi, 0) if info.bits == 64 else hi)
        out = safe.astype(dt)
        out = np.where(big, dt(info.max), np.where(small, dt(info.min), out)).astype(dt)
    return out if out.ndim else out[()]


def bf16_to_f32(bits):
    return (np.asarray(bits).astype(u32) << u32(16)).view(f32)


def f32_to_bf16(x):
    b = np.asarray(x, f32).view(u32)
    rounded = (b + u32(0x7FFF) + ((b >> u32(16)) & u32(1))) >> u32(16)
    out = np.where(np.isnan(np.asarray(x, f32)), u32(0x7FC0), rounded).astype(u16)
    return out


def cvt(x, dst: str, src: str, rnd: str, sat: bool, ftz_: bool):
    """Generic ``cvt`` (the code generator handles the simple integer cases inline)."""
    scalar = type(x) is not ndarray
    x = np.asarray(x)
    if src == "f16":
        xv = x.astype(u16).view(f16).astype(f32)
        src_kind = "f"
    elif src == "bf16":
        xv = bf16_to_f32(x)
        src_kind = "f"
    else:
        xv = x
        src_kind = src[0]
    with np.errstate(all="ignore"):
        if src_kind == "f" and ftz_:
            xv = ftz(xv.astype(f32) if src != "f64" else xv)
        if dst in ("f16", "bf16", "f32", "f64"):
            if src_kind == "f":
                if dst == "f32":
                    if src == "f64" and rnd in ("rz", "rm", "rp"):
                        out = round_f32(xv, rnd)
                    elif rnd in ("rni", "rzi", "rmi", "rpi"):
                        out = _round_int(xv, rnd).astype(f32)
                    else:
                        out = xv.astype(f32)
                elif dst == "f64":
                    out = _round_int(xv, rnd) if rnd in ("rni", "rzi", "rmi", "rpi") else xv.astype(f64)
                    out = np.asarray(out, f64)
                elif dst == "f16":
                    v = _round_int(xv, rnd) if rnd in ("rni", "rzi", "rmi", "rpi") else xv
                    out = np.asarray(v).astype(f16)
                else:
                    out = f32_to_bf16(np.asarray(xv).astype(f32))
            else:
                if dst == "f16":
                    out = xv.astype(f64).astype(f16)
                elif dst == "bf16":
                    out = f32_to_bf16(xv.astype(f32))
                elif dst == "f32":
                    if rnd in ("rz", "rm", "rp") and x.dtype.itemsize >= 4:
                        out = round_f32(xv.astype(f64), rnd)   # exact for |x| < 2**53
                    else:
                        out = xv.astype(f32)
                else:
                    out = xv.astype(f64)
            if sat:
                out = sat01(out)
            if ftz_ and dst == "f32":
                out = ftz(out)
            if dst == "f16":
                out = np.asarray(out).astype(f16).view(u16)
        else:
            ddt = np.dtype(UNSIGNED[int(dst[1:]) // 8] if dst[0] in "ub" else SIGNED[int(dst[1:]) // 8])
            if src_kind == "f":
                out = f2i(xv, ddt.type, rnd)
            elif sat:
                out = sat_int_convert(xv, ddt)
            else:
                out = xv.astype(ddt)
    out = np.asarray(out)
    return out[()] if scalar else out


def sat_int_convert(x, ddt):
    """Integer to integer with saturation to the destination range."""
    info = np.iinfo(ddt)
    if x.dtype.kind == "u":
        xx = x.astype(u64)
        return np.minimum(xx, u64(info.max)).astype(ddt)
    xx = x.astype(s64)
    return np.clip(xx, max(info.min, np.iinfo(s64).min), min(info.max, np.iinfo(s64).max)).astype(ddt)


# ---- half precision ---------------------------------------------------------------------------
def _unpack_half(x, t):
    a = np.ascontiguousarray(np.atleast_1d(np.asarray(x)))
    if t == "f16x2":
        return a.astype(u32).view(f16).astype(f64)
    if t == "bf16x2":
        return bf16_to_f32(a.astype(u32).view(u16)).astype(f64)
    return bf16_to_f32(a.astype(u16)).astype(f64)


def _pack_half(v, t):
    if t == "f16x2":
        return v.astype(f16).view(u32)
    if t == "bf16x2":
        return f32_to_bf16(v.astype(f32)).view(u32)
    return f32_to_bf16(v.astype(f32))


def half_op(op, t, ftz_, sat, *args):
    """f16x2 / bf16x2 / bf16 arithmetic: each half computed in f64 (exact for f16) and rounded once."""
    scalar = all(type(x) is not ndarray for x in args)
    n = max(np.size(x) for x in args)
    vals = [_unpack_half(np.broadcast_to(np.asarray(x), (n,)) if np.ndim(x) == 0 and n > 1 else x, t)
            for x in args]
    with np.errstate(all="ignore"):
        if op == "add":
            r = vals[0] + vals[1]
        elif op == "sub":
            r = vals[0] - vals[1]
        elif op == "mul":
            r = vals[0] * vals[1]
        elif op == "fma":
            r = fma64(vals[0], vals[1], vals[2])
        elif op == "neg":
            r = -vals[0]
        elif op == "abs":
            r = np.abs(vals[0])
        elif op in ("min", "max"):
            r = (fmin if op == "min" else fmax)(vals[0], vals[1])
        elif op in ("min_nan", "max_nan"):
            r = (fmin if op == "min_nan" else fmax)(vals[0], vals[1], True)
        else:
            raise ValueError(op)
        r = np.asarray(r, f64)
        if sat:
            r = sat01(r)
        out = _pack_half(r, t)
    return out[0] if scalar else out


def pack_half2(a, b, t):
    """cvt.rn.f16x2.f32 d, a, b: ``a`` rounded into the upper half, ``b`` into the lower."""
    scalar = type(a) is not ndarray and type(b) is not ndarray
    n = max(np.size(a), np.size(b))
    aa = np.broadcast_to(np.asarray(a, f32), (n,))
    bb = np.broadcast_to(np.asarray(b, f32), (n,))
    if t == "f16x2":
        hi, lo = aa.astype(f16).view(u16), bb.astype(f16).view(u16)
    else:
        hi, lo = f32_to_bf16(aa), f32_to_bf16(bb)
    out = (hi.astype(u32) << u32(16)) | lo.astype(u32)
    return out[0] if scalar else out
