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

from . import async_copy, call_stack, calls, device_launch, elect, heap, rt, tensor_copy, textures, video_scalar
from .errors import EmuError, not_supported
from .dtypes import NP, SIZE, STORAGE, UNS
from .ptx.ast import Imm, Instr, Not, Reg, Sink, Special, Sym
from .ptx.program import EXIT, Block, KernelIR
from .semantics import InstructionEmitters

log = logging.getLogger(__name__)


# Special registers that change while a kernel runs: (expression on the batch X, type).
_COUNTERS = {
    "clock": ("X.clock32()", "u32"), "clock_hi": ("X.clock_hi()", "u32"), "clock64": ("X.clock64()", "u64"),
    "globaltimer": ("X.globaltimer()", "u64"), "globaltimer_lo": ("X.globaltimer_lo()", "u32"),
    "globaltimer_hi": ("X.globaltimer_hi()", "u32"),
}
# The fixed special registers the PTX ISA declares .u64 (the rest are 32-bit).
_SPECIALS_U64 = {"gridid", "current_graph_exec"} | {f"pm{i}_64" for i in range(8)}


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
                         "ndarray": np.ndarray,
                         "callpush": call_stack.callpush, "callret": call_stack.callret,
                         "heap_malloc": heap.heap_malloc, "heap_free": heap.heap_free,
                         "vscalar": video_scalar.video_scalar, "mbar": async_copy.mbarrier_update,
                         "mbar_pending": async_copy.pending_count, "bulk_copy": async_copy.bulk_copy,
                         "elect": elect.elect, "device_launch": device_launch}
        self.ns.update(textures.KERNEL_NAMES)
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
        elif b.kind in ("cbr", "call"):
            out = [self.resolve(b.target), self.resolve(b.fallthrough)]
        elif b.kind == "return":
            out = [self.resolve(b.target)]
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

    def validate(self) -> None:
        """Generate every block without compiling it: refuses unsupported forms (for module load)."""
        for b in self.ir.blocks:
            BlockCodegen(self, b).build()

    def compile(self) -> CompiledKernel:
        gens = [BlockCodegen(self, b) for b in self.ir.blocks]
        for g in gens:
            g.build()
        live_out = self.liveness(gens)
        if self.ir.calls is not None:
            live_in = [set(x for x in g.loaded if not x.startswith("%")) | (live_out[k] - g.written_set)
                       for k, g in enumerate(gens)]
            self.ir.calls.plan_saves(live_in, {r: NP[STORAGE[t]] for r, t in self.ir.regs.items() if t in STORAGE})
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


class BlockCodegen(async_copy.AsyncEmitters, InstructionEmitters, heap.HeapEmitters,
                   video_scalar.ScalarVideoEmitters, elect.ElectEmitters,
                   textures.TextureEmitters, tensor_copy.TensorCopyEmitters, device_launch.DeviceLaunchEmitters):
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
        counter = _COUNTERS.get(name)
        if counter is not None:             # read anew at each use
            return counter
        self.kc.specials.add(name)
        v = "sp_" + re.sub(r"\W", "_", name)
        key = "%" + name
        if key not in self.loaded_set:
            self.loaded_set.add(key)
            self.loaded.append(key)
        return v, "u64" if name in _SPECIALS_U64 else "u32"

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
            return self.in_frame(self.kc.const(sym.offset + o.offset, "u64"), sym), "u64"
        if sym.space == "func":
            return self.kc.const(sym.offset + o.offset, "u64"), "u64"
        raise not_supported(f"symbol {o.name} as a value")

    def in_frame(self, offset: str, sym) -> str:
        """A local's address: in the current frame for a function called for real (frames move)."""
        return offset if sym.frame < 0 else f"({offset} + {self.use(Reg(calls.frame_register(sym.frame)))})"

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
        elif b.kind in ("call", "return"):
            term = self.call_term(b)
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

    def call_term(self, b: Block) -> str:
        """Push or pop the lanes' frames (after the write-back), then go on to the next block."""
        plan = self.ir.calls
        ops = b.last.operands
        if b.kind == "call":
            site = self.kc.bind(plan.sites[ops[0].value], "CS")
            target = f", {self.src(ops[1], 'u64')}" if len(ops) > 1 else ""
            call = f"callpush(X, {self.kc.bind(plan, 'CP')}, {site}, L{target})"
        else:
            f = next(f for f in plan.functions.values() if f.fid == ops[0].value)
            call = f"callret(X, {self.kc.bind(plan, 'CP')}, {self.kc.bind(f, 'CF')}, L)"
        return f"{call}\n    return {self.kc.resolve(b.target)}"

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
