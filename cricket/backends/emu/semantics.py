"""Instruction semantics: one emitter per PTX opcode, writing NumPy expressions for a block.

``InstructionEmitters`` is the half of ``codegen.BlockCodegen`` that knows what each instruction means;
the other half (operand reading, destination writing, guards, register traffic) lives in codegen.
Every emitter reads operands at the instruction's type and writes NumPy expressions; the run-time
helpers with exact PTX semantics (division, fma, conversions, bit operations) are in ``rt``.
"""
from __future__ import annotations

from .dtypes import CMP_INT, COMPUTE, INT_X2, SGN, SIZE, SPACES, STORAGE, UNS, type_mods
from .errors import EmuError, not_supported
from .matrix_emitters import MATRIX_OPS, MatrixEmitters
from .memory import LOCAL_WINDOW, SHARED_WINDOW
from .ptx.ast import Addr, Imm, Instr, Pair, Reg, Sink, Special, Sym, Vec
from .ptx.parser import VIDEO_SELECTOR_OPS
from .spaces import PARAM_WINDOW
from .textures import TEXTURE_OPS

SUPPORTED_OPS = {
    "mov", "ld", "ldu", "st", "cvta", "cvt", "add", "sub", "mul", "mad", "mul24", "mad24", "sad", "div", "rem",
    "abs", "neg", "min", "max", "and", "or", "xor", "not", "cnot", "shl", "shr", "shf", "popc", "clz", "brev",
    "bfe", "bfi", "bfind", "prmt", "lop3", "fma", "rcp", "sqrt", "rsqrt", "ex2", "lg2", "sin", "cos", "tanh",
    "copysign", "testp", "setp", "set", "selp", "slct", "addc", "subc", "madc", "bra", "ret", "exit", "trap",
    "brkpt", "bar", "barrier", "membar", "fence", "atom", "red", "shfl", "vote", "match", "redux",
    "activemask", "call", "nanosleep", "prefetch", "prefetchu", "isspacep", "cp", "dp4a",
    "pmevent", "discard", "createpolicy", "vprintf", "assertfail", "device_runtime", "mapa", "getctarank", "bmsk", "szext",
    "griddepcontrol", "mbarrier", "elect",
} | VIDEO_SELECTOR_OPS | MATRIX_OPS | TEXTURE_OPS


class InstructionEmitters(MatrixEmitters):
    """Mixin of ``BlockCodegen``: ``op_<opcode>(instr, index)`` emits the code of one instruction."""

    # ---- data movement -----------------------------------------------------------------------
    def op_mov(self, ins: Instr, idx: int) -> None:
        t = COMPUTE[type_mods(ins.mods)[-1]]
        d, a = ins.operands[0], ins.operands[1]
        if isinstance(d, Vec):          # unpack: mov.b64 {lo, hi}, x
            n = len(d.items)
            x = self.src(a, t)
            esz = SIZE[t] // n
            et = UNS[esz]
            xv = self.new_tmp()
            self.emit(f"{xv} = {self.conv(x, t, UNS[SIZE[t]])}")
            for k, item in enumerate(d.items):
                e = f"(({xv} >> {self.kc.const(k * esz * 8, UNS[SIZE[t]])}) & {self.kc.const((1 << esz * 8) - 1, UNS[SIZE[t]])}).astype({et})"
                self.assign(item, e, et)
            return
        if isinstance(a, Vec):          # pack: mov.b64 x, {lo, hi}
            n = len(a.items)
            esz = SIZE[t] // n
            ut = UNS[SIZE[t]]
            parts = []
            for k, item in enumerate(a.items):
                v = self.src(item, UNS[esz])
                parts.append(f"(({v}).astype({ut}) << {self.kc.const(k * esz * 8, ut)})")
            self.assign(d, " | ".join(parts), ut)
            return
        fresh = not isinstance(a, (Reg, Special))
        self.mark_alias_source(a)
        self.assign(d, self.src(a, t), t, fresh=fresh)

    def mem_space(self, ins: Instr) -> str:
        for m in ins.mods:
            base = m.split("::")[0]
            if base in SPACES:
                return base
        return "generic"

    def address(self, a: Addr, space: str) -> tuple[str, str]:
        """(space, expression) of an address operand; ``space`` may be refined by the symbol."""
        if not isinstance(a, Addr):
            raise not_supported(f"address operand {a!r}")
        if isinstance(a.base, Sym):
            sym = self.ir.symbols.get(a.base.name)
            if sym is None:
                raise EmuError(218, f"unknown symbol {a.base.name}")
            off = a.base.offset + a.offset
            if sym.space == "kparam":
                return "kparam", str(sym.offset + off)
            if sym.space == "local":
                return "local", self.in_frame(self.kc.const(sym.offset + off, "u64"), sym)
            if sym.space == "shared":
                if space == "generic":
                    return "generic", self.kc.const(rt_window("shared") + sym.offset + off, "u64")
                return "shared", self.kc.const(sym.offset + off, "u64")
            if sym.space == "global":
                return "global", f"(X.G[{sym.offset}] + {self.kc.const(off, 'u64')})"
            raise not_supported(f"address of {sym.space} symbol {sym.name}")
        if isinstance(a.base, Reg):
            rt_ = self.reg_type(a.base)
            v = self.use(a.base)
            if rt_[0] == "s":
                v = f"{v}.view({UNS[SIZE[rt_]]})"
                rt_ = UNS[SIZE[rt_]]
            if rt_[0] == "f":
                raise not_supported("a floating-point register as an address")
            if a.offset:
                v = f"({v} + {self.kc.const(a.offset, rt_)})"
            if space == "param":
                space = "kparam_dyn"
            if space == "const":
                space = "global"
            return space, v
        # absolute address
        if space == "const":
            space = "global"
        return space, self.kc.const(a.offset, "u64")

    def op_ld(self, ins: Instr, idx: int) -> None:
        space = self.mem_space(ins)
        t = COMPUTE[type_mods(ins.mods)[-1]]
        n = 1
        for m in ins.mods:
            if m in ("v2", "v4", "v8"):
                n = int(m[1:])
        d = ins.operands[0]
        dests = list(d.items) if isinstance(d, Vec) else [d]
        sp, addr = self.address(ins.operands[1], space)
        self.at(idx)
        res = self.new_tmp()
        if sp == "kparam":
            off = int(addr)
            vals = [f"X.par({off + k * SIZE[t]}, {t})" for k in range(n)]
            for item, e in zip(dests, vals):
                self.assign(item, e, t)
            return
        mask = self.mask_expr()
        if sp == "global":
            self.emit(f"{res} = X.ld_global({addr}, {t}, {n}, L, {mask})")
        elif sp in ("shared", "local", "generic", "kparam_dyn"):
            self.emit(f"{res} = X.ld_{sp}({addr}, {t}, {n}, L, {mask})")
        else:
            raise not_supported(f"ld from .{sp}")
        for k, item in enumerate(dests):
            self.assign(item, f"{res}[{k}]", t)

    op_ldu = op_ld

    def op_st(self, ins: Instr, idx: int) -> None:
        space = self.mem_space(ins)
        t = COMPUTE[type_mods(ins.mods)[-1]]
        v = ins.operands[1]
        items = list(v.items) if isinstance(v, Vec) else [v]
        sp, addr = self.address(ins.operands[0], space)
        vals = ", ".join(self.src(i, t) if not isinstance(i, Sink) else self.kc.const(0, t) for i in items)
        self.at(idx)
        mask = self.mask_expr()
        if sp in ("global", "shared", "local", "generic"):
            self.emit(f"X.st_{sp}({addr}, {t}, ({vals},), L, {mask})")
        else:
            raise not_supported(f"st to .{sp} (kernel parameters are read-only)")

    def op_cvta(self, ins: Instr, idx: int) -> None:
        t = COMPUTE[type_mods(ins.mods)[-1]]
        m = [x for x in ins.mods if x in ("global", "shared", "local", "const", "param")]
        space = m[0] if m else "global"
        to = "to" in ins.mods
        a = ins.operands[1]
        if isinstance(a, Sym):
            e, st = self.sym_value(a)
            x = self.conv(e, st, "u64")
        else:
            x = self.src(a, "u64" if SIZE[t] == 8 else "u32")
            x = self.conv(x, "u64" if SIZE[t] == 8 else "u32", "u64")
        if space in ("global", "const"):
            self.mark_alias_source(a)
            self.assign(ins.operands[0], x, "u64", fresh=not isinstance(a, Reg))
            return
        base = self.kc.const(rt_window(space), "u64")
        e = f"({x} - {base})" if to else f"({x} + {base})"
        self.assign(ins.operands[0], self.conv(e, "u64", t), t)

    def op_isspacep(self, ins: Instr, idx: int) -> None:
        space = ins.mods[0]
        a = self.src(ins.operands[1], "u64")
        self.assign(ins.operands[0], f"X.isspace({a}, {space!r})", "b_")

    # ---- integer and float arithmetic --------------------------------------------------------
    def binop(self, ins: Instr, fmt: str, t: str | None = None) -> None:
        t = t or COMPUTE[type_mods(ins.mods)[-1]]
        a = self.src(ins.operands[1], t)
        b = self.src(ins.operands[2], t)
        self.assign(ins.operands[0], fmt.format(a=a, b=b, t=t), t)

    def fwrap(self, ins: Instr, expr: str, t: str) -> str:
        """Apply .ftz/.sat to a float result."""
        if t == "f32" and "ftz" in ins.mods:
            expr = f"rt.ftz({expr})"
        if "sat" in ins.mods and t[0] == "f":
            expr = f"rt.sat01({expr})"
        return expr

    def fsrc(self, ins: Instr, o, t: str) -> str:
        e = self.src(o, t)
        if t == "f32" and "ftz" in ins.mods:
            e = f"rt.ftz({e})"
        return e

    def rnd(self, ins: Instr) -> str:
        for m in ins.mods:
            if m in ("rn", "rz", "rm", "rp"):
                return m
        return "rn"

    def float_bin(self, ins: Instr, opch: str) -> None:
        t = COMPUTE[type_mods(ins.mods)[-1]]
        a = self.fsrc(ins, ins.operands[1], t)
        b = self.fsrc(ins, ins.operands[2], t)
        r = self.rnd(ins)
        if t == "f32" and r != "rn" and opch in "+-*":
            e = f"rt.round_f32(({a}).astype(f64) {opch} ({b}).astype(f64), {r!r})"
        else:
            e = f"({a} {opch} {b})"
        self.assign(ins.operands[0], self.fwrap(ins, e, t), t)

    HALF_TYPES = ("f16x2", "bf16x2", "bf16")

    def half_op(self, ins: Instr, op: str) -> bool:
        """Packed half (f16x2, bf16x2) and bfloat16 arithmetic through ``rt.half_op``; False if not one."""
        ts = type_mods(ins.mods)
        if not ts or ts[-1] not in self.HALF_TYPES:
            return False
        t = ts[-1]
        st = STORAGE[t]
        nsrc = {"fma": 3, "neg": 1, "abs": 1}.get(op, 2)
        args = ", ".join(self.src(o, st) for o in ins.operands[1:1 + nsrc])
        e = f"rt.half_op({op!r}, {t!r}, {'ftz' in ins.mods}, {'sat' in ins.mods}, {args})"
        self.assign(ins.operands[0], e, st)
        return True

    def int_x2_op(self, ins: Instr, op: str) -> bool:
        """Packed 16-bit integer SIMD (.s16x2, .u16x2) through ``rt.simd16x2``; False if not one."""
        ts = type_mods(ins.mods)
        if not ts or ts[-1] not in INT_X2:
            return False
        t = ts[-1]
        relu = "relu" in ins.mods
        if relu and t != "s16x2":
            raise not_supported(f"`{'.'.join((ins.op,) + ins.mods)}` (.relu applies to .s16x2 and .s32 only)")
        a = self.src(ins.operands[1], "u32")
        b = self.src(ins.operands[2], "u32")
        self.assign(ins.operands[0], f"rt.simd16x2({op!r}, {a}, {b}, {t == 's16x2'}, {relu})", "u32")
        return True

    def op_add(self, ins: Instr, idx: int) -> None:
        if not self.half_op(ins, "add") and not self.int_x2_op(ins, "add"):
            self.addsub(ins, "+")

    def op_sub(self, ins: Instr, idx: int) -> None:
        if not self.half_op(ins, "sub") and not self.int_x2_op(ins, "sub"):
            self.addsub(ins, "-")

    def addsub(self, ins: Instr, opch: str) -> None:
        t = COMPUTE[type_mods(ins.mods)[-1]]
        if t[0] == "f":
            if t == "f16":
                self.binop(ins, "({a} " + opch + " {b})")
                return
            self.float_bin(ins, opch)
            return
        if "cc" in ins.mods or ins.op in ("addc", "subc"):
            self.carry_op(ins, opch)
            return
        if "sat" in ins.mods:
            a = self.src(ins.operands[1], t)
            b = self.src(ins.operands[2], t)
            self.assign(ins.operands[0], f"rt.sat_int(({a}).astype(s64) {opch} ({b}).astype(s64), {t})", t)
            return
        self.binop(ins, "({a} " + opch + " {b})")

    def carry_op(self, ins: Instr, opch: str) -> None:
        t = COMPUTE[type_mods(ins.mods)[-1]]
        ut = UNS[SIZE[t]]
        a = self.src(ins.operands[1], ut)
        b = self.src(ins.operands[2], ut)
        cin = self.kc.const(0, "u32")
        if ins.op in ("addc", "subc"):
            cin = self.cc_read()
        fn = "rt.add_carry" if opch == "+" else "rt.sub_borrow"
        r = self.new_tmp()
        self.emit(f"{r}, {r}c = {fn}({a}, {b}, {cin}, {ut})")
        self.assign(ins.operands[0], f"{r}", ut)
        if "cc" in ins.mods:
            self.cc_write(f"{r}c")

    def cc_read(self) -> str:
        self.ir.regs.setdefault("__cc", "u32")
        return self.use(Reg("__cc"))

    def cc_write(self, e: str) -> None:
        self.ir.regs.setdefault("__cc", "u32")
        self.assign(Reg("__cc"), e, "u32")

    op_addc = op_add
    op_subc = op_sub

    def op_mul(self, ins: Instr, idx: int) -> None:
        if self.half_op(ins, "mul"):
            return
        t = COMPUTE[type_mods(ins.mods)[-1]]
        if t[0] == "f":
            if t == "f16":
                self.binop(ins, "({a} * {b})")
            else:
                self.float_bin(ins, "*")
            return
        a = self.src(ins.operands[1], t)
        b = self.src(ins.operands[2], t)
        if "wide" in ins.mods:
            wt = (SGN if t[0] == "s" else UNS)[SIZE[t] * 2]
            self.assign(ins.operands[0], f"(({a}).astype({wt}) * ({b}).astype({wt}))", wt)
        elif "hi" in ins.mods:
            self.assign(ins.operands[0], f"rt.mulhi({a}, {b}, {t})", t)
        else:
            self.assign(ins.operands[0], f"({a} * {b})", t)

    def op_mul24(self, ins: Instr, idx: int) -> None:
        t = COMPUTE[type_mods(ins.mods)[-1]]
        a = self.src(ins.operands[1], t)
        b = self.src(ins.operands[2], t)
        if t[0] == "s":
            ext = f"((({a}).astype(s64) << 40) >> 40) * ((({b}).astype(s64) << 40) >> 40)"
        else:
            ext = f"((({a}).astype(u64) & 0xFFFFFF) * (({b}).astype(u64) & 0xFFFFFF))"
        sh = "16" if "hi" in ins.mods else "0"
        e = f"(({ext}) >> {sh})"
        if len(ins.operands) > 3:   # mad24
            c = self.src(ins.operands[3], t)
            e = f"(({e}).astype({t}) + {c})"
        self.assign(ins.operands[0], f"({e}).astype({t})", t)

    op_mad24 = op_mul24

    def op_mad(self, ins: Instr, idx: int) -> None:
        t = COMPUTE[type_mods(ins.mods)[-1]]
        if t[0] == "f":
            self.op_fma(ins, idx)
            return
        a = self.src(ins.operands[1], t)
        b = self.src(ins.operands[2], t)
        if "wide" in ins.mods:
            wt = (SGN if t[0] == "s" else UNS)[SIZE[t] * 2]
            c = self.src(ins.operands[3], wt)
            prod = f"(({a}).astype({wt}) * ({b}).astype({wt}))"
            rt_ = wt
        elif "hi" in ins.mods:
            c = self.src(ins.operands[3], t)
            prod = f"rt.mulhi({a}, {b}, {t})"
            rt_ = t
        else:
            c = self.src(ins.operands[3], t)
            prod = f"({a} * {b})"
            rt_ = t
        if "cc" in ins.mods or ins.op == "madc":
            ut = UNS[SIZE[rt_]]
            cin = self.cc_read() if ins.op == "madc" else self.kc.const(0, "u32")
            r = self.new_tmp()
            self.emit(f"{r}, {r}c = rt.add_carry({self.conv(prod, rt_, ut)}, {self.conv(c, rt_, ut)}, {cin}, {ut})")
            self.assign(ins.operands[0], r, ut)
            if "cc" in ins.mods:
                self.cc_write(f"{r}c")
            return
        if "sat" in ins.mods:
            self.assign(ins.operands[0], f"rt.sat_int(({prod}).astype(s64) + ({c}).astype(s64), {t})", t)
            return
        self.assign(ins.operands[0], f"({prod} + {c})", rt_)

    op_madc = op_mad

    def op_sad(self, ins: Instr, idx: int) -> None:
        t = COMPUTE[type_mods(ins.mods)[-1]]
        a = self.src(ins.operands[1], t)
        b = self.src(ins.operands[2], t)
        c = self.src(ins.operands[3], t)
        self.assign(ins.operands[0], f"(np.where({a} > {b}, {a} - {b}, {b} - {a}).astype({t}) + {c})", t)

    def op_div(self, ins: Instr, idx: int) -> None:
        t = COMPUTE[type_mods(ins.mods)[-1]]
        if t[0] == "f":
            self.float_bin(ins, "/")
            return
        a = self.src(ins.operands[1], t)
        b = self.src(ins.operands[2], t)
        self.assign(ins.operands[0], f"rt.idiv({a}, {b}, {t})", t)

    def op_rem(self, ins: Instr, idx: int) -> None:
        t = COMPUTE[type_mods(ins.mods)[-1]]
        a = self.src(ins.operands[1], t)
        b = self.src(ins.operands[2], t)
        self.assign(ins.operands[0], f"rt.irem({a}, {b}, {t})", t)

    def unary(self, ins: Instr, fmt: str) -> None:
        t = COMPUTE[type_mods(ins.mods)[-1]]
        a = self.fsrc(ins, ins.operands[1], t) if t[0] == "f" else self.src(ins.operands[1], t)
        e = fmt.format(a=a, t=t)
        if t[0] == "f":
            e = self.fwrap(ins, e, t)
        self.assign(ins.operands[0], e, t)

    def op_abs(self, ins: Instr, idx: int) -> None:
        if not self.half_op(ins, "abs"):
            self.unary(ins, "np.abs({a})")

    def op_neg(self, ins: Instr, idx: int) -> None:
        if not self.half_op(ins, "neg"):
            self.unary(ins, "(-{a})")

    def op_min(self, ins: Instr, idx: int) -> None:
        self.minmax(ins, "min")

    def op_max(self, ins: Instr, idx: int) -> None:
        self.minmax(ins, "max")

    def minmax(self, ins: Instr, which: str) -> None:
        if self.half_op(ins, which + ("_nan" if "NaN" in ins.mods else "")) or self.int_x2_op(ins, which):
            return
        t = COMPUTE[type_mods(ins.mods)[-1]]
        if t[0] == "f":
            a = self.fsrc(ins, ins.operands[1], t)
            b = self.fsrc(ins, ins.operands[2], t)
            e = f"rt.f{which}({a}, {b}, {'NaN' in ins.mods})"
            self.assign(ins.operands[0], self.fwrap(ins, e, t), t)
            return
        a = self.src(ins.operands[1], t)
        b = self.src(ins.operands[2], t)
        fn = "np.minimum" if which == "min" else "np.maximum"
        e = f"{fn}({a}, {b})"
        if "relu" in ins.mods:          # min.relu.s32 / max.relu.s32: a negative result becomes 0
            if t != "s32":
                raise not_supported(f"`{'.'.join((ins.op,) + ins.mods)}` (.relu applies to .s16x2 and .s32 only)")
            e = f"np.maximum({e}, {self.kc.const(0, t)})"
        self.assign(ins.operands[0], e, t)

    def op_and(self, ins: Instr, idx: int) -> None:
        self.binop(ins, "({a} & {b})")

    def op_or(self, ins: Instr, idx: int) -> None:
        self.binop(ins, "({a} | {b})")

    def op_xor(self, ins: Instr, idx: int) -> None:
        self.binop(ins, "({a} ^ {b})")

    def op_not(self, ins: Instr, idx: int) -> None:
        self.unary(ins, "(~{a})")

    def op_cnot(self, ins: Instr, idx: int) -> None:
        self.unary(ins, "({a} == 0).astype({t})")

    def op_shl(self, ins: Instr, idx: int) -> None:
        self.shift(ins, "shl")

    def op_shr(self, ins: Instr, idx: int) -> None:
        self.shift(ins, "shr")

    def shift(self, ins: Instr, kind: str) -> None:
        t = COMPUTE[type_mods(ins.mods)[-1]]
        bits = SIZE[t] * 8
        a = self.src(ins.operands[1], t)
        nb = ins.operands[2]
        op = "<<" if kind == "shl" else ">>"
        if isinstance(nb, Imm):
            n = int(nb.value) & 0xFFFFFFFF
            if n < bits:
                e = f"({a} {op} {self.kc.const(n, t)})"
            elif kind == "shr" and t[0] == "s":
                e = f"({a} >> {self.kc.const(bits - 1, t)})"
            else:
                e = f"({a} & {self.kc.const(0, t)})"
        else:
            n = self.src(nb, "u32")
            e = f"rt.{kind}({a}, {n}, {bits})"
        self.assign(ins.operands[0], e, t)

    def op_shf(self, ins: Instr, idx: int) -> None:
        a = self.src(ins.operands[1], "u32")
        b = self.src(ins.operands[2], "u32")
        c = self.src(ins.operands[3], "u32")
        self.assign(ins.operands[0], f"rt.shf({a}, {b}, {c}, {'l' in ins.mods}, {'clamp' in ins.mods})", "u32")

    def op_popc(self, ins: Instr, idx: int) -> None:
        t = COMPUTE[type_mods(ins.mods)[-1]]
        self.assign(ins.operands[0], f"rt.popc({self.src(ins.operands[1], UNS[SIZE[t]])})", "u32")

    def op_clz(self, ins: Instr, idx: int) -> None:
        t = COMPUTE[type_mods(ins.mods)[-1]]
        self.assign(ins.operands[0], f"rt.clz({self.src(ins.operands[1], UNS[SIZE[t]])}, {SIZE[t] * 8})", "u32")

    def op_brev(self, ins: Instr, idx: int) -> None:
        t = COMPUTE[type_mods(ins.mods)[-1]]
        ut = UNS[SIZE[t]]
        self.assign(ins.operands[0], f"rt.brev({self.src(ins.operands[1], ut)}, {SIZE[t] * 8})", ut)

    def op_bfind(self, ins: Instr, idx: int) -> None:
        t = COMPUTE[type_mods(ins.mods)[-1]]
        a = self.src(ins.operands[1], t)
        self.assign(ins.operands[0], f"rt.bfind({a}, {SIZE[t] * 8}, {t[0] == 's'}, {'shiftamt' in ins.mods})", "u32")

    def op_bfe(self, ins: Instr, idx: int) -> None:
        t = COMPUTE[type_mods(ins.mods)[-1]]
        a = self.src(ins.operands[1], t)
        b = self.src(ins.operands[2], "u32")
        c = self.src(ins.operands[3], "u32")
        self.assign(ins.operands[0], f"rt.bfe({a}, {b}, {c}, {SIZE[t] * 8}, {t[0] == 's'})", t)

    def op_bfi(self, ins: Instr, idx: int) -> None:
        t = COMPUTE[type_mods(ins.mods)[-1]]
        f = self.src(ins.operands[1], t)
        b = self.src(ins.operands[2], t)
        c = self.src(ins.operands[3], "u32")
        d = self.src(ins.operands[4], "u32")
        ut = UNS[SIZE[t]]
        self.assign(ins.operands[0], f"rt.bfi({f}, {b}, {c}, {d}, {SIZE[t] * 8})", ut)

    def op_bmsk(self, ins: Instr, idx: int) -> None:
        a = self.src(ins.operands[1], "u32")
        b = self.src(ins.operands[2], "u32")
        self.assign(ins.operands[0], f"rt.bmsk({a}, {b}, {'clamp' in ins.mods})", "u32")

    def op_szext(self, ins: Instr, idx: int) -> None:
        t = COMPUTE[type_mods(ins.mods)[-1]]
        a = self.src(ins.operands[1], t)
        b = self.src(ins.operands[2], "u32")
        self.assign(ins.operands[0], f"rt.szext({a}, {b}, {'clamp' in ins.mods}, {t[0] == 's'})", t)

    def op_prmt(self, ins: Instr, idx: int) -> None:
        unknown = [m for m in ins.mods if m not in ("b32", "f4e", "b4e", "rc8", "ecl", "ecr", "rc16")]
        if unknown:
            raise not_supported(f"prmt mode .{unknown[0]}")
        mode = next((m for m in ins.mods if m in ("f4e", "b4e", "rc8", "ecl", "ecr", "rc16")), "")
        a = self.src(ins.operands[1], "u32")
        b = self.src(ins.operands[2], "u32")
        c = self.src(ins.operands[3], "u32")
        self.assign(ins.operands[0], f"rt.prmt({a}, {b}, {c}, {mode!r})", "u32")

    def op_lop3(self, ins: Instr, idx: int) -> None:
        t = COMPUTE[type_mods(ins.mods)[-1]]
        a = self.src(ins.operands[1], t)
        b = self.src(ins.operands[2], t)
        c = self.src(ins.operands[3], t)
        lut = ins.operands[4]
        if not isinstance(lut, Imm):
            raise not_supported("lop3 with a non-constant lookup table")
        lut = int(lut.value) & 0xFF
        terms = []
        for i in range(8):
            if lut >> i & 1:
                x = a if i & 4 else f"~{a}"
                y = b if i & 2 else f"~{b}"
                z = c if i & 1 else f"~{c}"
                terms.append(f"({x} & {y} & {z})")
        e = " | ".join(terms) if terms else self.kc.const(0, t)
        if lut == 0xFF:
            e = self.kc.const(-1, t)
        self.assign(ins.operands[0], f"({e})" if lut not in (0, 0xFF) else f"({a} & {self.kc.const(0, t)} | {e})", t)

    def op_dp4a(self, ins: Instr, idx: int) -> None:
        ts = type_mods(ins.mods)
        a = self.src(ins.operands[1], "u32")
        b = self.src(ins.operands[2], "u32")
        c = self.src(ins.operands[3], ts[0] if ts[0][0] == "s" else "u32")
        parts = []
        for k in range(4):
            ea = f"(({a} >> {self.kc.const(8 * k, 'u32')}) & {self.kc.const(255, 'u32')}).astype(u8)"
            eb = f"(({b} >> {self.kc.const(8 * k, 'u32')}) & {self.kc.const(255, 'u32')}).astype(u8)"
            if ts[0][0] == "s":
                ea = f"{ea}.view(s8).astype(s64)"
            else:
                ea = f"{ea}.astype(s64)"
            if ts[1][0] == "s":
                eb = f"{eb}.view(s8).astype(s64)"
            else:
                eb = f"{eb}.astype(s64)"
            parts.append(f"{ea} * {eb}")
        e = f"(({' + '.join(parts)}) + ({c}).astype(s64))"
        self.assign(ins.operands[0], f"({e}).astype(u32)", "u32")

    # ---- SIMD video instructions (vadd2 ... vset4) ------------------------------------------
    def video_simd(self, ins: Instr, idx: int) -> None:
        """``vop2``/``vop4 .dtype.atype.btype{.sat|.add} d{.mask}, a{.asel}, b{.bsel}, c`` (vset:
        ``.atype.btype.cmp{.add}``), checked here as ptxas would and computed by ``rt.video_simd``.
        vset's merge keeps ``c``'s elements, as the ISA's semantics say (its prose says ``b``)."""
        name = ins.op
        lanes = int(name[-1])
        op = name[1:-1]
        form = ".".join((name,) + ins.mods)
        types = [m for m in ins.mods if m in ("u32", "s32")]
        sels = {int(m[3]): m[5:] for m in ins.mods if m.startswith("sel")}
        other = [m for m in ins.mods if m not in ("u32", "s32", "sat", "add") and not m.startswith("sel")]
        cmp = None
        if op == "set":
            cmp = other.pop(0) if other and other[0] in ("eq", "ne", "lt", "le", "gt", "ge") else None
            types = ["u32"] + types          # the comparison's result is unsigned
        accumulate, sat = "add" in ins.mods, "sat" in ins.mods
        if (len(types) != 3 or other or len(ins.operands) != 4 or (op == "set") != (cmp is not None)
                or (sat and (accumulate or op == "set")) or set(sels) - {0, 1, 2}):
            raise EmuError(218, f"malformed video instruction `{form}`")
        unit, digits = ("h", "0123") if lanes == 2 else ("b", "01234567")

        def selector(k: int, default: str) -> tuple[int, ...]:
            sel = sels.get(k, default)
            if sel[0] != unit or len(sel) != lanes + 1 or any(ch not in digits for ch in sel[1:]):
                raise EmuError(218, f"bad operand selector .{sel} in `{form}`")
            return tuple(int(ch) for ch in reversed(sel[1:]))     # element 0 first

        mask = sels.get(0, unit + "3210"[-lanes:])
        if (mask[0] != unit or not mask[1:] or any(ch not in "3210"[-lanes:] for ch in mask[1:])
                or list(mask[1:]) != sorted(set(mask[1:]), reverse=True)):
            raise EmuError(218, f"bad destination mask .{mask} in `{form}`")
        asel = selector(1, unit + ("10" if lanes == 2 else "3210"))
        bsel = selector(2, unit + ("32" if lanes == 2 else "7654"))
        a, b, c = (self.src(o, "u32") for o in ins.operands[1:])
        signed = [t == "s32" for t in types]
        e = (f"rt.video_simd({op!r}, {lanes}, {a}, {b}, {c}, {signed[1]}, {signed[2]}, {signed[0]}, {sat}, "
             f"{accumulate}, {tuple(int(ch) for ch in mask[1:])}, {asel}, {bsel}, {cmp!r})")
        self.assign(ins.operands[0], e, "u32")

    op_vadd2 = op_vsub2 = op_vavrg2 = op_vabsdiff2 = op_vmin2 = op_vmax2 = op_vset2 = video_simd
    op_vadd4 = op_vsub4 = op_vavrg4 = op_vabsdiff4 = op_vmin4 = op_vmax4 = op_vset4 = video_simd

    # ---- floating point specials -------------------------------------------------------------
    def op_fma(self, ins: Instr, idx: int) -> None:
        if self.half_op(ins, "fma"):
            return
        t = COMPUTE[type_mods(ins.mods)[-1]]
        a = self.fsrc(ins, ins.operands[1], t)
        b = self.fsrc(ins, ins.operands[2], t)
        c = self.fsrc(ins, ins.operands[3], t)
        r = self.rnd(ins)
        if t == "f32":
            e = f"rt.fma32({a}, {b}, {c}, {r!r})"
        elif t == "f64":
            e = f"rt.fma64({a}, {b}, {c}, {r!r})"
        elif t == "f16":
            e = f"rt.fma32(({a}).astype(f32), ({b}).astype(f32), ({c}).astype(f32)).astype(f16)"
        else:
            raise not_supported(f"fma.{t}")
        self.assign(ins.operands[0], self.fwrap(ins, e, t), t)

    def op_rcp(self, ins: Instr, idx: int) -> None:
        t = COMPUTE[type_mods(ins.mods)[-1]]
        self.unary(ins, f"({self.kc.const(1.0, t)} / {{a}})")

    def op_sqrt(self, ins: Instr, idx: int) -> None:
        self.unary(ins, "np.sqrt({a})")

    def op_rsqrt(self, ins: Instr, idx: int) -> None:
        t = COMPUTE[type_mods(ins.mods)[-1]]
        self.unary(ins, f"({self.kc.const(1.0, t)} / np.sqrt({{a}}))")

    def op_ex2(self, ins: Instr, idx: int) -> None:
        self.unary(ins, "np.exp2({a})")

    def op_lg2(self, ins: Instr, idx: int) -> None:
        self.unary(ins, "np.log2({a})")

    def op_sin(self, ins: Instr, idx: int) -> None:
        self.unary(ins, "np.sin({a})")

    def op_cos(self, ins: Instr, idx: int) -> None:
        self.unary(ins, "np.cos({a})")

    def op_tanh(self, ins: Instr, idx: int) -> None:
        self.unary(ins, "np.tanh({a})")

    def op_copysign(self, ins: Instr, idx: int) -> None:
        t = COMPUTE[type_mods(ins.mods)[-1]]
        a = self.src(ins.operands[1], t)
        b = self.src(ins.operands[2], t)
        self.assign(ins.operands[0], f"np.copysign({b}, {a})", t)

    def op_testp(self, ins: Instr, idx: int) -> None:
        t = COMPUTE[type_mods(ins.mods)[-1]]
        what = next(m for m in ins.mods if m in ("finite", "infinite", "number", "notanumber", "normal", "subnormal"))
        a = self.src(ins.operands[1], t)
        self.assign(ins.operands[0], f"rt.testp({a}, {what!r})", "b_")

    # ---- comparisons and selection -----------------------------------------------------------
    def compare(self, ins: Instr, cmp: str, t: str) -> str:
        a = self.src(ins.operands[1], t)
        b = self.src(ins.operands[2], t)
        if t[0] == "f" and "ftz" in ins.mods and t == "f32":
            a, b = f"rt.ftz({a})", f"rt.ftz({b})"
        if t[0] != "f":
            return f"({a} {CMP_INT[cmp]} {b})"
        if cmp in ("eq", "lt", "le", "gt", "ge"):
            return f"({a} {CMP_INT[cmp]} {b})"
        if cmp == "ne":
            return f"(({a} != {b}) & ~np.isnan({a}) & ~np.isnan({b}))"
        if cmp in ("equ", "ltu", "leu", "gtu", "geu", "neu"):
            base = CMP_INT[cmp[:-1]]
            return f"(({a} {base} {b}) | np.isnan({a}) | np.isnan({b}))"
        if cmp == "num":
            return f"(~np.isnan({a}) & ~np.isnan({b}))"
        if cmp == "nan":
            return f"(np.isnan({a}) | np.isnan({b}))"
        raise not_supported(f"comparison .{cmp}")

    def op_setp(self, ins: Instr, idx: int) -> None:
        t = COMPUTE[type_mods(ins.mods)[-1]]
        cmp = ins.mods[0]
        boolop = next((m for m in ins.mods[1:] if m in ("and", "or", "xor")), None)
        with_ = self.new_tmp()
        self.emit(f"{with_} = {self.compare(ins, cmp, t)}")
        d = ins.operands[0]
        p, q = (d.first, d.second) if isinstance(d, Pair) else (d, None)
        if boolop:
            c = self.src(ins.operands[3], "b_")
            o = {"and": "&", "or": "|", "xor": "^"}[boolop]
            self.assign(p, f"({with_} {o} {c})", "b_")
            if q is not None:
                self.assign(q, f"((~{with_}) {o} {c})", "b_")
        else:
            self.assign(p, with_, "b_")
            if q is not None:
                self.assign(q, f"(~{with_})", "b_")

    def op_set(self, ins: Instr, idx: int) -> None:
        ts = type_mods(ins.mods)
        dt, st = COMPUTE[ts[0]], COMPUTE[ts[1]]
        cmp = ins.mods[0]
        c = self.compare(ins, cmp, st)
        if dt[0] == "f":
            e = f"np.where({c}, {self.kc.const(1.0, dt)}, {self.kc.const(0.0, dt)})"
        else:
            e = f"np.where({c}, {self.kc.const(-1, dt)}, {self.kc.const(0, dt)})"
        self.assign(ins.operands[0], e, dt)

    def op_selp(self, ins: Instr, idx: int) -> None:
        t = COMPUTE[type_mods(ins.mods)[-1]]
        a = self.src(ins.operands[1], t)
        b = self.src(ins.operands[2], t)
        c = self.src(ins.operands[3], "b_")
        self.assign(ins.operands[0], f"sel({c}, {a}, {b})", t)

    def op_slct(self, ins: Instr, idx: int) -> None:
        ts = type_mods(ins.mods)
        t, ct = COMPUTE[ts[0]], COMPUTE[ts[1]]
        a = self.src(ins.operands[1], t)
        b = self.src(ins.operands[2], t)
        c = self.src(ins.operands[3], ct)
        self.assign(ins.operands[0], f"sel({c} >= 0, {a}, {b})", t)

    # ---- conversions -------------------------------------------------------------------------
    def op_cvt(self, ins: Instr, idx: int) -> None:
        if "tf32" in ins.mods:
            self.cvt_tf32(ins)
            return
        ts = type_mods(ins.mods)
        dst, src = ts[0], ts[1]
        rnd = next((m for m in ins.mods if m in ("rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi")), "")
        sat = "sat" in ins.mods
        ftz = "ftz" in ins.mods
        if dst in ("f16x2", "bf16x2") and src == "f32" and "relu" not in ins.mods and len(ins.operands) == 3:
            # pack two floats: d = {cvt(a) in the high half, cvt(b) in the low half}
            a = self.src(ins.operands[1], "f32")
            b = self.src(ins.operands[2], "f32")
            self.assign(ins.operands[0], f"rt.pack_half2({a}, {b}, {dst!r})", "u32")
            return
        if "relu" in ins.mods or dst in ("f16x2", "bf16x2", "e4m3x2", "e5m2x2", "tf32"):
            raise not_supported(f"cvt form `{'.'.join((ins.op,) + ins.mods)}`")
        src_storage = STORAGE[src] if src in ("f16", "bf16") else COMPUTE[src]
        a = self.src(ins.operands[1], src_storage)
        dst_t = STORAGE[dst] if dst in ("f16", "bf16") else COMPUTE[dst]
        simple_int = src[0] in "usb" and dst[0] in "usb" and not sat
        if simple_int:
            self.assign(ins.operands[0], f"({a}).astype({dst_t})", dst_t)
        elif src == "f32" and dst == "f64" and not rnd and not sat and not ftz:
            self.assign(ins.operands[0], f"({a}).astype(f64)", "f64")
        else:
            self.assign(ins.operands[0], f"rt.cvt({a}, {dst!r}, {src!r}, {rnd!r}, {sat}, {ftz})", dst_t)

    # ---- control and synchronisation ---------------------------------------------------------
    def op_trap(self, ins: Instr, idx: int) -> None:
        self.at(idx)
        self.emit(f"X.trap(L, {self.mask_expr()})")

    def op_brkpt(self, ins: Instr, idx: int) -> None:
        pass

    def op_membar(self, ins: Instr, idx: int) -> None:
        pass

    op_fence = op_membar
    op_nanosleep = op_membar
    op_prefetch = op_membar
    op_prefetchu = op_membar
    op_pmevent = op_membar
    op_discard = op_membar
    # Programmatic dependent launch: the emulator runs each launch to completion, in order, so the
    # grids a kernel waits for (griddepcontrol.wait) have finished and their writes are visible;
    # griddepcontrol.launch_dependents only lets a dependent grid start early.
    op_griddepcontrol = op_membar

    def op_createpolicy(self, ins: Instr, idx: int) -> None:
        self.assign(ins.operands[0], self.kc.const(0, "u64"), "u64")

    def op_bar(self, ins: Instr, idx: int) -> None:
        # only bar.warp.sync / bar.arrive reach here (bar.sync ends a block)
        if "warp" in ins.mods:
            self.at(idx)
            m = self.src(ins.operands[0], "u32")
            self.emit(f"X.warp_sync({m}, L, {self.mask_expr()})")

    op_barrier = op_bar

    def op_cp(self, ins: Instr, idx: int) -> None:
        if "async" not in ins.mods:
            raise not_supported(f"cp form `{'.'.join((ins.op,) + ins.mods)}`")
        if "commit_group" in ins.mods or "wait_group" in ins.mods or "wait_all" in ins.mods:
            return
        # cp.async.ca.shared.global [dst], [src], cp-size{, src-size}: done synchronously
        size_op = ins.operands[2]
        if not isinstance(size_op, Imm):
            raise not_supported("cp.async with a non-constant size")
        size = int(size_op.value)
        srcsize = self.src(ins.operands[3], "u32") if len(ins.operands) > 3 and not isinstance(ins.operands[3], Imm) \
            else (str(int(ins.operands[3].value)) if len(ins.operands) > 3 else str(size))
        dsp, daddr = self.address(ins.operands[0], "shared")
        ssp, saddr = self.address(ins.operands[1], "global")
        self.at(idx)
        self.emit(f"X.cp_async({daddr}, {saddr}, {size}, {srcsize}, L, {self.mask_expr()})")

    # ---- atomics -----------------------------------------------------------------------------
    ATOM_OPS = ("add", "min", "max", "inc", "dec", "and", "or", "xor", "exch", "cas")

    def op_atom(self, ins: Instr, idx: int) -> None:
        op = next(m for m in ins.mods if m in self.ATOM_OPS)
        t = COMPUTE[type_mods(ins.mods)[-1]]
        space = self.mem_space(ins)
        if ins.op == "red":
            d = None
            ops = ins.operands
            addr_o, rest = ops[0], ops[1:]
        else:
            d = ins.operands[0]
            addr_o, rest = ins.operands[1], ins.operands[2:]
        sp, addr = self.address(addr_o, space)
        b = self.src(rest[0], t)
        c = self.src(rest[1], t) if len(rest) > 1 and op == "cas" else "None"
        self.at(idx)
        r = self.new_tmp()
        self.emit(f"{r} = X.atom({sp!r}, {op!r}, {addr}, {t}, {b}, {c}, L, {self.mask_expr()})")
        if d is not None:
            self.assign(d, r, t)

    op_red = op_atom

    # ---- warp-level --------------------------------------------------------------------------
    def op_shfl(self, ins: Instr, idx: int) -> None:
        mode = next(m for m in ins.mods if m in ("up", "down", "bfly", "idx"))
        d = ins.operands[0]
        dreg, preg = (d.first, d.second) if isinstance(d, Pair) else (d, None)
        a = self.src(ins.operands[1], "u32")
        b = self.src(ins.operands[2], "u32")
        c = self.src(ins.operands[3], "u32")
        m = self.src(ins.operands[4], "u32") if len(ins.operands) > 4 else self.kc.const(0xFFFFFFFF, "u32")
        self.at(idx)
        r = self.new_tmp()
        self.emit(f"{r}, {r}p = X.shfl({mode!r}, {a}, {b}, {c}, {m}, L)")
        self.assign(dreg, r, "u32")
        if preg is not None:
            self.assign(preg, f"{r}p", "b_")

    def op_vote(self, ins: Instr, idx: int) -> None:
        mode = next(m for m in ins.mods if m in ("all", "any", "uni", "ballot"))
        a = self.src(ins.operands[1], "b_")
        m = self.src(ins.operands[2], "u32") if len(ins.operands) > 2 else self.kc.const(0xFFFFFFFF, "u32")
        self.at(idx)
        r = self.new_tmp()
        self.emit(f"{r} = X.vote({mode!r}, {a}, {m}, L, {self.mask_expr()})")
        self.assign(ins.operands[0], r, "u32" if mode == "ballot" else "b_")

    def op_activemask(self, ins: Instr, idx: int) -> None:
        r = self.new_tmp()
        self.emit(f"{r} = X.vote('ballot', True, {self.kc.const(0xFFFFFFFF, 'u32')}, L, True)")
        self.assign(ins.operands[0], r, "u32")

    def op_match(self, ins: Instr, idx: int) -> None:
        mode = next(m for m in ins.mods if m in ("any", "all"))
        t = COMPUTE[type_mods(ins.mods)[-1]]
        d = ins.operands[0]
        dreg, preg = (d.first, d.second) if isinstance(d, Pair) else (d, None)
        a = self.src(ins.operands[1], t)
        m = self.src(ins.operands[2], "u32")
        self.at(idx)
        r = self.new_tmp()
        self.emit(f"{r}, {r}p = X.match({mode!r}, {a}, {m}, L)")
        self.assign(dreg, r, "u32")
        if preg is not None:
            self.assign(preg, f"{r}p", "b_")

    def op_redux(self, ins: Instr, idx: int) -> None:
        op = next(m for m in ins.mods if m in ("add", "min", "max", "and", "or", "xor"))
        t = COMPUTE[type_mods(ins.mods)[-1]]
        a = self.src(ins.operands[1], t)
        m = self.src(ins.operands[2], "u32")
        self.at(idx)
        r = self.new_tmp()
        self.emit(f"{r} = X.redux({op!r}, {a}, {m}, L)")
        self.assign(ins.operands[0], r, t)

    # ---- intrinsics --------------------------------------------------------------------------
    def local_arg(self, o) -> str:
        sp, addr = self.address(Addr(o, 0), "local")
        if sp != "local":
            raise not_supported(f"argument {o} of a system call")
        return addr

    def op_vprintf(self, ins: Instr, idx: int) -> None:
        ops = ins.operands
        ret = ops[0] if len(ops) == 3 else None
        fmt, args = ops[-2], ops[-1]
        self.at(idx)
        r = self.new_tmp()
        self.emit(f"{r} = X.vprintf(X.ld_local({self.local_arg(fmt)}, u64, 1, L, True)[0], "
                  f"X.ld_local({self.local_arg(args)}, u64, 1, L, True)[0], L, {self.mask_expr()})")
        if ret is not None:
            self.emit(f"X.st_local({self.local_arg(ret)}, s32, ({r},), L, {self.mask_expr()})")

    def op_assertfail(self, ins: Instr, idx: int) -> None:
        ops = ins.operands[-5:]
        args = []
        for o, t in zip(ops, ("u64", "u64", "u32", "u64", "u64")):
            args.append(f"X.ld_local({self.local_arg(o)}, {t}, 1, L, True)[0]")
        self.at(idx)
        self.emit(f"X.assertfail({', '.join(args)}, L, {self.mask_expr()})")

    def op_mapa(self, ins: Instr, idx: int) -> None:
        raise not_supported("distributed shared memory (mapa)")

    op_getctarank = op_mapa


def rt_window(space: str) -> int:
    """Base of the generic-address window of ``space``."""
    return {"shared": SHARED_WINDOW, "param": PARAM_WINDOW}.get(space, LOCAL_WINDOW)
