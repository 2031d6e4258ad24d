"""The scalar video instructions: vadd, vsub, vabsdiff, vmin, vmax, vshl, vshr, vmad, vset.

Per the PTX ISA (9.7.18.1): each source is a byte, half-word or word of a 32-bit register (``.asel``,
``.bsel``), sign- or zero-extended by its type to 33 bits; the primary operation gives a 34-bit
intermediate (vmad: up to 66 bits), optionally clamped to the destination's range (the sub-word's
range when merging), then optionally combined with ``c`` by a secondary ``.add``/``.min``/``.max``
or merged into ``c`` at ``.dsel``; the low 32 bits are the result. These instructions are rare
(inline assembly), so they are computed exactly on Python integers, one per lane.
"""
from __future__ import annotations

import numpy as np

from .errors import EmuError
from .rt import video_primary
from .ptx.ast import Instr

_COMPARE = ("eq", "ne", "lt", "le", "gt", "ge")
_SECONDARY = ("add", "min", "max")
# selector -> (shift, bits)
_PARTS = {"b0": (0, 8), "b1": (8, 8), "b2": (16, 8), "b3": (24, 8), "h0": (0, 16), "h1": (16, 16)}
_MERGE_MASK = 0xFFFFFFFF


def _ints(x, n: int) -> np.ndarray:
    """A lane value (NumPy scalar or array of 32-bit words) as an object array of Python ints."""
    a = np.asarray(x).astype(np.uint32).astype(np.int64)
    return np.broadcast_to(a, (n,)).astype(object)


def _part(v: np.ndarray, signed: bool, sel: str | None) -> np.ndarray:
    shift, bits = _PARTS[sel] if sel else (0, 32)
    v = (v >> shift) & ((1 << bits) - 1)
    if signed:
        v = np.where(v >= 1 << (bits - 1), v - (1 << bits), v)
    return v


def _clamp(v: np.ndarray, signed: bool, bits: int) -> np.ndarray:
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    return np.minimum(np.maximum(v, lo), hi)


def video_scalar(op: str, n: int, a, b, c, asigned: bool, bsigned: bool, dsigned: bool, asel, bsel, dsel,
                 sat: bool, secop, mode=None, cmp=None, negate=(False, False, False), po: bool = False,
                 scale: int = 0):
    """One scalar video instruction over ``n`` lanes; returns the 32-bit results (uint32)."""
    a = _ints(a, n)
    b = _ints(b, n)
    ta = _part(a, asigned, asel)
    tb = _part(b, bsigned, bsel)
    if op == "vmad":
        return _vmad(ta, tb, _ints(c, n), asigned, bsigned, negate, po, scale, sat)
    if op in ("vshl", "vshr"):
        tb = np.minimum(tb, 32) if mode == "clamp" else tb & 0x1F
        tmp = ta << tb if op == "vshl" else ta >> tb
    else:                                      # vset gives an unsigned 0 or 1
        tmp = np.asarray(video_primary(op[1:], ta, tb, cmp)).astype(object)
    if sat:
        tmp = _clamp(tmp, dsigned, _PARTS[dsel][1] if dsel else 32)
    if dsel is not None:
        shift, bits = _PARTS[dsel]
        field = ((1 << bits) - 1) << shift
        out = ((tmp << shift) & field) | (_ints(c, n) & (_MERGE_MASK ^ field))
    elif secop is not None:
        cc = _part(_ints(c, n), dsigned, None)
        out = tmp + cc if secop == "add" else np.minimum(tmp, cc) if secop == "min" else np.maximum(tmp, cc)
    else:
        out = tmp
    return (out & _MERGE_MASK).astype(np.uint32)


def _vmad(ta, tb, c, asigned, bsigned, negate, po, scale, sat):
    neg_ab = negate[0] != negate[1]
    signed_final = asigned or bsigned or neg_ab or negate[2]
    tmp = ta * tb
    lsb = 0
    if po:
        lsb = 1
    elif neg_ab:
        tmp, lsb = -tmp - 1, 1                # ~tmp in two's complement
    elif negate[2]:
        c, lsb = c ^ 0xFFFFFFFF, 1
    cc = _part(c, signed_final, None)
    result = (tmp + cc + lsb) >> scale          # arithmetic: sign-extended when the result is signed
    if sat:
        result = _clamp(result, signed_final, 32)
    return (result & _MERGE_MASK).astype(np.uint32)


class ScalarVideoEmitters:
    """Code generation for the scalar video instructions (mixin of the block code generator)."""

    def video_scalar(self, ins: Instr, idx: int) -> None:
        op = ins.op
        form = ".".join((op,) + ins.mods)
        types = [m for m in ins.mods if m in ("u32", "s32")]
        sels = {int(m[3]): m[5:] for m in ins.mods if m.startswith("sel")}
        negate = tuple(f"neg{k}" in ins.mods for k in (1, 2, 3))
        rest = [m for m in ins.mods if m not in ("u32", "s32") and not m.startswith(("sel", "neg"))]
        sat = "sat" in rest
        rest = [m for m in rest if m != "sat"]
        cmp = mode = secop = None
        po, scale = False, 0
        if op == "vset":
            types = ["u32"] + types              # the comparison's result is unsigned
            cmp = rest.pop(0) if rest and rest[0] in _COMPARE else None
        if op in ("vshl", "vshr"):
            mode = rest.pop(0) if rest and rest[0] in ("clamp", "wrap") else None
        if op == "vmad":
            po = "po" in rest
            scale = 7 if "shr7" in rest else 15 if "shr15" in rest else 0
            rest = [m for m in rest if m not in ("po", "shr7", "shr15")]
        elif rest and rest[0] in _SECONDARY:
            secop = rest.pop(0)
        n_ops = len(ins.operands)
        bad = (len(types) != 3 or rest or any(s not in _PARTS for s in sels.values()) or set(sels) - {0, 1, 2}
               or (op == "vset") != (cmp is not None) or (op in ("vshl", "vshr")) != (mode is not None)
               or (op in ("vshl", "vshr") and types[2] != "u32") or (sat and op == "vset")
               or (op == "vmad" and (0 in sels or (po and any(negate)) or n_ops != 4))
               or (op != "vmad" and any(negate))
               or (op != "vmad" and n_ops != (4 if (secop or 0 in sels) else 3))
               or (secop is not None and 0 in sels))
        if bad:
            raise EmuError(218, f"malformed scalar video instruction `{form}`")
        a, b = (self.src(o, "u32") for o in ins.operands[1:3])
        c = self.src(ins.operands[3], "u32") if n_ops == 4 else "0"
        s = [t == "s32" for t in types]
        e = (f"vscalar({op!r}, {self.lanes_expr()}, {a}, {b}, {c}, {s[1]}, {s[2]}, {s[0]}, {sels.get(1)!r}, "
             f"{sels.get(2)!r}, {sels.get(0)!r}, {sat}, {secop!r}, {mode!r}, {cmp!r}, {negate}, {po}, {scale})")
        self.assign(ins.operands[0], e, "u32")

    def lanes_expr(self) -> str:
        """The number of lanes the block runs for (the length of its per-lane arrays)."""
        return "(X.N if L is None else len(L))"

    op_vadd = op_vsub = op_vabsdiff = op_vmin = op_vmax = video_scalar
    op_vshl = op_vshr = op_vmad = op_vset = video_scalar
