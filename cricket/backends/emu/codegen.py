"""Basic block -> Python/NumPy source -> function, once per (module, kernel).

A block function ``b<k>(X, L)`` runs block ``k`` for the lanes ``L`` of the batch (``None``: every
lane). It reads the registers it needs from the register file ``X.R`` into locals, executes the
instructions as NumPy expressions, writes the changed registers back and returns the terminator:
an ``int`` (next block, or -1 for exit), ``(pred, taken, not_taken)`` for a conditional branch, or
``("B", next, value)`` for a barrier. ``X`` is the running batch (``executor.Batch``).
"""
from __future__ import annotations

import logging
import re
import struct

import numpy as np

from . import rt
from .errors import EmuError, not_supported
from .ptx.ast import Addr, Imm, Instr, Not, Pair, Reg, Sink, Special, Sym, Vec
from .ptx.program import EXIT, Block, KernelIR, type_size

log = logging.getLogger(__name__)

# register storage dtype by declared PTX type
STORAGE = {"b8": "u8", "u8": "u8", "s8": "s8", "b16": "u16", "u16": "u16", "s16": "s16", "f16": "u16",
           "bf16": "u16", "b32": "u32", "u32": "u32", "s32": "s32", "f32": "f32", "f16x2": "u32",
           "bf16x2": "u32", "b64": "u64", "u64": "u64", "s64": "s64", "f64": "f64", "pred": "b_"}
# compute dtype by instruction type
COMPUTE = dict(STORAGE, f16="f16", bf16="u16")
NP = {"u8": np.uint8, "s8": np.int8, "u16": np.uint16, "s16": np.int16, "u32": np.uint32, "s32": np.int32,
      "u64": np.uint64, "s64": np.int64, "f16": np.float16, "f32": np.float32, "f64": np.float64, "b_": np.bool_}
SIZE = {k: np.dtype(v).itemsize for k, v in NP.items()}
UNS = {1: "u8", 2: "u16", 4: "u32", 8: "u64"}
SGN = {1: "s8", 2: "s16", 4: "s32", 8: "s64"}
TYPES = set(STORAGE) | {"f16x2", "bf16x2"}
CMP_INT = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=",
           "lo": "<", "ls": "<=", "hi": ">", "hs": ">="}
SPACES = {"global", "shared", "local", "param", "const", "generic"}
IGNORED_MODS = {"ca", "cg", "cs", "lu", "cv", "wb", "wt", "nc", "volatile", "relaxed", "acquire", "release",
                "acq_rel", "weak", "sys", "gpu", "cta", "cluster", "unified", "mmio", "sc", "aligned",
                "L1::evict_normal", "L1::evict_unchanged", "L1::evict_first", "L1::evict_last",
                "L1::no_allocate", "L2::evict_normal", "L2::evict_first", "L2::evict_last", "L2::64B",
                "L2::128B", "L2::256B", "L2::cache_hint", "level::cache_hint", "level::prefetch_size",
                "uni", "noftz", "approx", "full", "shared::cta", "shared::cluster", "to"}

SUPPORTED_OPS = {
    "mov", "ld", "ldu", "st", "cvta", "cvt", "add", "sub", "mul", "mad", "mul24", "mad24", "sad", "div", "rem",
    "abs", "neg", "min", "max", "and", "or", "xor", "not", "cnot", "shl", "shr", "shf", "popc", "clz", "brev",
    "bfe", "bfi", "bfind", "prmt", "lop3", "fma", "rcp", "sqrt", "rsqrt", "ex2", "lg2", "sin", "cos", "tanh",
    "copysign", "testp", "setp", "set", "selp", "slct", "addc", "subc", "madc", "bra", "ret", "exit", "trap",
    "brkpt", "bar", "barrier", "membar", "fence", "atom", "red", "shfl", "vote", "match", "redux",
    "activemask", "call", "nanosleep", "prefetch", "prefetchu", "isspacep", "cp", "dp4a", "dp2a",
    "pmevent", "discard", "createpolicy", "vprintf", "assertfail", "mapa", "getctarank", "bmsk", "szext",
}


def type_mods(mods) -> list[str]:
    return [m for m in mods if m in TYPES]


class CompiledKernel:
    """The executable form of a kernel: one function per basic block plus metadata."""

    def __init__(self, ir: KernelIR, fns: list, instrs: list[Instr], specials: set[str], sources: list[str]):
        self.ir = ir
        self.name = ir.name
        self.fns = fns
        self.instrs = instrs
        self.specials = specials
        self.sources = sources
        self.warp_blocks = [b.has_warp_ops for b in ir.blocks]
        # instructions per block, terminator included (thread-instruction accounting)
        self.block_sizes = [len(b.instrs) + (1 if getattr(b, "last", None) is not None else 0) for b in ir.blocks]
        self.reg_dtypes = {r: NP[STORAGE[t]] for r, t in ir.regs.items() if t in STORAGE}

    def source(self) -> str:
        """The generated Python source of every block (for debugging)."""
        return "\n\n".join(self.sources)


class KernelCompiler:
    def __init__(self, ir: KernelIR) -> None:
        self.ir = ir
        self.ns: dict = {"np": np, "rt": rt, "get": rt.get, "put": rt.put, "sel": rt.sel,
                         "ndarray": np.ndarray}
        self.ns.update(NP)
        self._const_names: dict = {}
        self._vars: dict[str, str] = {}
        self._used_vars: set[str] = set()
        self.instrs: list[Instr] = []
        self.specials: set[str] = set()

    def var(self, reg: str) -> str:
        v = self._vars.get(reg)
        if v is None:
            v = "v_" + re.sub(r"\W", "_", reg)
            while v in self._used_vars:
                v += "_"
            self._vars[reg] = v
            self._used_vars.add(v)
        return v

    def const(self, value, np_name: str) -> str:
        if isinstance(value, int) and np_name[0] in "us":
            bits = SIZE[np_name] * 8
            value &= (1 << bits) - 1
            if np_name[0] == "s" and value >= 1 << (bits - 1):
                value -= 1 << bits
        val = NP[np_name](value)
        key = (np_name, val.tobytes())
        name = self._const_names.get(key)
        if name is None:
            name = f"K{len(self._const_names)}"
            self._const_names[key] = name
            self.ns[name] = val
        return name

    def bind(self, obj, hint: str) -> str:
        name = f"{hint}{len(self.ns)}"
        self.ns[name] = obj
        return name

    def resolve(self, target: int) -> int:
        """Follow empty blocks: a branch to an empty exit block is an exit (so the lanes leave at once)."""
        seen = set()
        blocks = self.ir.blocks
        while 0 <= target < len(blocks) and target not in seen:
            seen.add(target)
            b = blocks[target]
            if b.instrs:
                return target
            if b.kind == "exit":
                return EXIT
            if b.kind != "jump":
                return target
            target = b.target
        return target

    def successors(self, b: Block) -> list[int]:
        if b.kind in ("jump", "barrier"):
            out = [self.resolve(b.target)]
        elif b.kind == "cbr":
            out = [self.resolve(b.target), self.resolve(b.fallthrough)]
        else:
            out = []
        return [t for t in out if t >= 0]

    def liveness(self, gens: list["BlockCodegen"]) -> list[set[str]]:
        """Registers live at the end of each block (standard backward data flow)."""
        n = len(gens)
        use = [set(x for x in g.loaded if not x.startswith("%")) for g in gens]
        defs = [g.written_set for g in gens]
        succ = [self.successors(b) for b in self.ir.blocks]
        live_in = [set() for _ in range(n)]
        live_out = [set() for _ in range(n)]
        changed = True
        while changed:
            changed = False
            for k in range(n - 1, -1, -1):
                out = set()
                for t in succ[k]:
                    out |= live_in[t]
                inn = use[k] | (out - defs[k])
                if out != live_out[k] or inn != live_in[k]:
                    live_out[k], live_in[k] = out, inn
                    changed = True
        return live_out

    def compile(self) -> CompiledKernel:
        gens = [BlockCodegen(self, b) for b in self.ir.blocks]
        for g in gens:
            g.build()
        live_out = self.liveness(gens)
        sources = [g.finish(live_out[k]) for k, g in enumerate(gens)]
        code = "\n\n".join(sources)
        try:
            compiled = compile(code, f"<emu kernel {self.ir.name}>", "exec")
        except SyntaxError as e:  # a generator bug: show the offending source
            log.error("generated code does not compile: %s\n%s", e, code)
            raise
        exec(compiled, self.ns)
        fns = [self.ns[f"b{b.index}"] for b in self.ir.blocks]
        return CompiledKernel(self.ir, fns, self.instrs, self.specials, sources)


def compile_kernel(ir: KernelIR) -> CompiledKernel:
    return KernelCompiler(ir).compile()


class BlockCodegen:
    def __init__(self, kc: KernelCompiler, block: Block) -> None:
        self.kc = kc
        self.ir = kc.ir
        self.block = block
        self.lines: list[str] = []
        self.loaded: list[str] = []
        self.loaded_set: set[str] = set()
        self.written: list[str] = []
        self.written_set: set[str] = set()
        self.alias: set[str] = set()
        self.guard: str | None = None
        self.tmp = 0
        self.ins: Instr | None = None

    # ---- helpers -----------------------------------------------------------------------------
    def emit(self, line: str) -> None:
        self.lines.append(line)

    def new_tmp(self) -> str:
        self.tmp += 1
        return f"t{self.tmp}"

    def reg_type(self, r: Reg) -> str:
        t = self.ir.regs.get(r.name)
        if t is None:
            raise EmuError(218, f"undeclared register %{r.name}")
        if t not in STORAGE:
            raise not_supported(f"register type .{t}")
        return STORAGE[t]

    def use(self, r: Reg) -> str:
        v = self.kc.var(r.name)
        if r.name not in self.written_set and r.name not in self.loaded_set:
            self.loaded_set.add(r.name)
            self.loaded.append(r.name)
        return v

    def special(self, s: Special) -> tuple[str, str]:
        name = s.name
        if name in ("clock", "clock_hi"):
            return "X.clock32()", "u32"
        if name in ("clock64", "globaltimer"):
            return "X.clock64()", "u64"
        if name in ("globaltimer_lo",):
            return "X.clock32()", "u32"
        self.kc.specials.add(name)
        v = "sp_" + re.sub(r"\W", "_", name)
        key = "%" + name
        if key not in self.loaded_set:
            self.loaded_set.add(key)
            self.loaded.append(key)
        return v, "u32"

    @staticmethod
    def conv(expr: str, frm: str, to: str) -> str:
        if frm == to:
            return expr
        if frm == "b_":
            return f"({expr}).astype({to})"
        if to == "b_":
            return f"(({expr}) != 0)"
        fs, ts = SIZE[frm], SIZE[to]
        ff, tf = frm[0] == "f", to[0] == "f"
        if fs == ts:
            return f"({expr}).view({to})"
        if not ff and not tf:
            return f"({expr}).astype({to})"
        if ff and not tf:
            return f"({expr}).view({UNS[fs]}).astype({to})"
        if not ff and tf:
            return f"({expr}).astype({UNS[ts]}).view({to})"
        return f"({expr}).astype({to})"

    def imm(self, o: Imm, t: str) -> str:
        v = o.value
        if t == "b_":
            return self.kc.const(bool(v), "b_")
        if t[0] == "f":
            if o.kind == "int" and t != "f16":
                return self.kc.const(float(v), t)
            return self.kc.const(float(v), t)
        # integer type
        if o.kind in ("f32", "f64", "float"):
            if o.kind == "f32" or (o.kind == "float" and SIZE[t] == 4):
                bits = struct.unpack("<I", struct.pack("<f", v))[0]
            else:
                bits = struct.unpack("<Q", struct.pack("<d", v))[0]
            v = bits
        bitsz = SIZE[t] * 8
        v = int(v) & ((1 << bitsz) - 1)
        if t[0] == "s" and v >= 1 << (bitsz - 1):
            v -= 1 << bitsz
        return self.kc.const(v, t)

    def src(self, o, t: str) -> str:
        """An operand as an expression of compute dtype ``t``."""
        if isinstance(o, Reg):
            return self.conv(self.use(o), self.reg_type(o), t)
        if isinstance(o, Imm):
            return self.imm(o, t)
        if isinstance(o, Not):
            return f"(~{self.src(o.operand, 'b_')})"
        if isinstance(o, Special):
            e, st = self.special(o)
            return self.conv(e, st, t)
        if isinstance(o, Sym):
            e, st = self.sym_value(o)
            return self.conv(e, st, t)
        raise not_supported(f"operand {o!r}")

    def sym_value(self, o: Sym) -> tuple[str, str]:
        """The value of a symbol used as an operand: its address in its own state space."""
        sym = self.ir.symbols.get(o.name)
        if sym is None:
            raise EmuError(218, f"unknown symbol {o.name}")
        if sym.space == "global":
            return f"(X.G[{sym.offset}] + {self.kc.const(o.offset, 'u64')})", "u64"
        if sym.space in ("shared", "local", "kparam"):
            return self.kc.const(sym.offset + o.offset, "u64"), "u64"
        if sym.space == "func":
            raise not_supported(f"taking the address of function {o.name} (function pointers)")
        raise not_supported(f"symbol {o.name} as a value")

    def assign(self, o, expr: str, t: str, fresh: bool = True) -> None:
        """Write ``expr`` (compute dtype ``t``) to destination operand ``o`` (honours the guard)."""
        if isinstance(o, Sink):
            return
        if not isinstance(o, Reg):
            raise not_supported(f"destination {o!r}")
        rt_ = self.reg_type(o)
        v = self.kc.var(o.name)
        val = self.conv(expr, t, rt_)
        if self.guard is not None:
            old = self.use(o)
            self.emit(f"{v} = sel({self.guard}, {val}, {old})")
        else:
            self.emit(f"{v} = {val}")
            if not fresh:
                self.alias.add(o.name)
        if o.name not in self.written_set:
            self.written_set.add(o.name)
            self.written.append(o.name)

    def mark_alias_source(self, o) -> None:
        if isinstance(o, Reg):
            self.alias.add(o.name)

    def mask_expr(self) -> str:
        return self.guard if self.guard is not None else "True"

    def at(self, idx: int) -> None:
        self.emit(f"X.at = {idx}")

    # ---- generation --------------------------------------------------------------------------
    def build(self) -> None:
        b = self.block
        for ins in b.instrs:
            idx = len(self.kc.instrs)
            self.kc.instrs.append(ins)
            self.ins = ins
            self.guard = None
            if ins.guard is not None:
                g = self.src(ins.guard[0], "b_")
                self.guard = f"(~{g})" if ins.guard[1] else g
                gv = self.new_tmp()
                self.emit(f"{gv} = {self.guard}")
                self.guard = gv
            handler = getattr(self, "op_" + ins.op, None)
            if handler is None:
                raise not_supported(f"PTX instruction `{'.'.join((ins.op,) + ins.mods)}`")
            try:
                handler(ins, idx)
            except EmuError:
                raise
            except (KeyError, IndexError, ValueError, AttributeError, TypeError) as e:
                raise not_supported(f"PTX instruction form `{ins.text()}` ({type(e).__name__}: {e})") from None
        self.guard = None
        # terminator
        last = getattr(b, "last", None)
        if last is not None:
            self.kc.instrs.append(last)
        res = self.kc.resolve
        if b.kind == "jump":
            term = f"return {res(b.target)}"
        elif b.kind == "exit":
            term = f"return {EXIT}"
        elif b.kind == "cbr":
            p = self.src(b.guard[0], "b_")
            if b.guard[1]:
                term = f"return ({p}, {res(b.fallthrough)}, {res(b.target)})"
            else:
                term = f"return ({p}, {res(b.target)}, {res(b.fallthrough)})"
        else:
            term = self.barrier_term(b)
        self.term = term

    def finish(self, live_out: set[str]) -> str:
        """The block's source, writing back only the registers later blocks read."""
        b = self.block
        term = self.term
        written = [r for r in self.written if r in live_out]
        head = [f"def b{b.index}(X, L):", "    R = X.R"]
        for name in self.loaded:
            if name.startswith("%"):
                v = "sp_" + re.sub(r"\W", "_", name[1:])
                head.append(f"    {v} = get(R, {name!r}, L, 0)")
            else:
                z = self.kc.const(0, self.reg_type(Reg(name)))
                head.append(f"    {self.kc.var(name)} = get(R, {name!r}, L, {z})")
        body = ["    " + line for line in self.lines]
        tail = []
        stale = sorted((self.alias - set(written)) & (set(self.loaded) | self.written_set))
        if written or stale:
            tail.append("    if L is None:")
            inner = []
            for name in written:
                inner.append(f"R[{name!r}] = {self.kc.var(name)}")
                inner.append(f"X.O.{'discard' if name in self.alias else 'add'}({name!r})")
            for name in stale:
                inner.append(f"X.O.discard({name!r})")
            tail += ["        " + i for i in inner] or ["        pass"]
            if written:
                tail.append("    else:")
                for name in written:
                    dt = self.reg_type(Reg(name))
                    tail.append(f"        put(X, {name!r}, L, {self.kc.var(name)}, {dt})")
        return "\n".join(head + body + tail + ["    " + term])

    def barrier_term(self, b: Block) -> str:
        ins = b.barrier
        m = ins.mods
        if "red" in m:
            # bar.red.popc.u32 d, a{, b}, {!}c   /  bar.red.and.pred d, a{, b}, {!}c
            op = next(x for x in m if x in ("popc", "and", "or"))
            d = ins.operands[0]
            c = ins.operands[-1]
            p = self.src(c, "b_")
            self.barrier_dest = (d, op)
            reg = d.name if isinstance(d, Reg) else None
            return f"return ('B', {self.kc.resolve(b.target)}, ({p}, {op!r}, {reg!r}))"
        return f"return ('B', {self.kc.resolve(b.target)}, None)"

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
                return "local", self.kc.const(sym.offset + off, "u64")
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
        if space == "param":
            raise not_supported("cvta.param (generic addresses of kernel parameters)")
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

    def op_add(self, ins: Instr, idx: int) -> None:
        self.addsub(ins, "+")

    def op_sub(self, ins: Instr, idx: int) -> None:
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
        self.unary(ins, "np.abs({a})")

    def op_neg(self, ins: Instr, idx: int) -> None:
        self.unary(ins, "(-{a})")

    def op_min(self, ins: Instr, idx: int) -> None:
        self.minmax(ins, "min")

    def op_max(self, ins: Instr, idx: int) -> None:
        self.minmax(ins, "max")

    def minmax(self, ins: Instr, which: str) -> None:
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
        self.assign(ins.operands[0], f"{fn}({a}, {b})", t)

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

    # ---- floating point specials -------------------------------------------------------------
    def op_fma(self, ins: Instr, idx: int) -> None:
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
        ts = type_mods(ins.mods)
        dst, src = ts[0], ts[1]
        rnd = next((m for m in ins.mods if m in ("rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi")), "")
        sat = "sat" in ins.mods
        ftz = "ftz" in ins.mods
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
    from .memory import LOCAL_WINDOW, SHARED_WINDOW
    return SHARED_WINDOW if space == "shared" else LOCAL_WINDOW
