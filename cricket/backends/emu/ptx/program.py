"""From parsed modules to one kernel's IR: linking, call inlining, memory layout, basic blocks.

``Program`` links one or several modules (several = an ``-rdc=true`` build): internal names stay
private to their module, ``.extern`` functions and variables resolve to the definition in any module.
``Program.kernel(name)`` returns a ``KernelIR`` whose body is a flat list of basic blocks with every
call inlined and every symbol resolved to a space and an offset.
"""
from __future__ import annotations

import logging
import math
import re
from dataclasses import dataclass, field

from ..calls import CALL_OPS, CallPlan, function_address
from ..device_launch import call_kind
from ..errors import CUDA_ERROR_INVALID_PTX, CUDA_ERROR_NOT_FOUND, EmuError, not_supported
from .ast import Addr, Function, Group, Instr, Label, Module, Not, Pair, Reg, Sym, VarDecl, Vec
from .parser import ensure_body

log = logging.getLogger(__name__)

TYPE_SIZES = {"b8": 1, "u8": 1, "s8": 1, "b16": 2, "u16": 2, "s16": 2, "f16": 2, "bf16": 2,
              "b32": 4, "u32": 4, "s32": 4, "f32": 4, "f16x2": 4, "bf16x2": 4, "tf32": 4,
              "b64": 8, "u64": 8, "s64": 8, "f64": 8, "b128": 16, "pred": 1, "e4m3x2": 2, "e5m2x2": 2}

MAX_INLINE_DEPTH = 64
EXIT = -1

# Opcodes with a feature name: refused at module load with CUDA_ERROR_NOT_SUPPORTED.
UNSUPPORTED_FEATURES = {
    "wgmma": "tensor-core instruction",
    "tcgen05": "tensor-core instruction",
    "setmaxnreg": "setmaxnreg",
    "applypriority": "L2 cache priority",
    "barrier.cluster": "thread-block clusters", "multimem": "multimem (NVLink multicast)",
    "alloca": "dynamic stack allocation (alloca)",
    "stacksave": "dynamic stack allocation", "stackrestore": "dynamic stack allocation",
}


def type_size(t: str) -> int:
    try:
        return TYPE_SIZES[t]
    except KeyError:
        raise not_supported(f"PTX type .{t}") from None


def decl_size(d: VarDecl) -> int:
    n = d.count if d.count is not None else 1
    return type_size(d.type) * n * d.vector


def decl_align(d: VarDecl) -> int:
    return d.align or type_size(d.type) * d.vector


def _align(n: int, a: int) -> int:
    return (n + a - 1) // a * a


@dataclass
class Symbol:
    """Where a name lives: ``space`` is kparam, local, shared, global, func or label."""
    name: str
    space: str
    offset: int = 0          # kparam/local/shared offset, or index into the global address table
    size: int = 0
    decl: VarDecl | None = None
    frame: int = -1          # local: in the frame of real function ``frame`` (see calls.py), else -1


@dataclass
class Block:
    index: int
    instrs: list[Instr]
    kind: str = "jump"       # jump, cbr, exit, barrier
    target: int = EXIT       # jump/barrier: next block; cbr: taken target
    fallthrough: int = EXIT  # cbr: not-taken target
    guard: tuple[Reg, bool] | None = None    # cbr predicate
    barrier: Instr | None = None             # the bar instruction ending a barrier block
    has_warp_ops: bool = False


@dataclass
class KernelParam:
    name: str
    type: str
    offset: int
    size: int
    align: int
    kind: int = 0        # cricket.x cr_param_kind: 1 integer or pointer, 2 float, 3 an array (bytes)


@dataclass
class KernelIR:
    name: str
    params: list[KernelParam]
    param_size: int
    regs: dict[str, str]
    blocks: list[Block]
    symbols: dict[str, Symbol]
    shared_static: int
    dynamic_shared_align: int
    local_size: int
    files: dict[int, str] = field(default_factory=dict)
    source_count: int = 0
    calls: CallPlan | None = None      # functions called for real (recursion, function pointers)
    # kernels a device-side launch may name: function address -> (entry name, parameter bytes)
    device_kernels: dict[int, tuple[str, int]] | None = None

    def describe(self, ins: Instr | None) -> tuple[str | None, str | None]:
        """(instruction text, "file:line") for error messages."""
        if ins is None:
            return None, None
        src = None
        if ins.loc:
            src = f"{self.files.get(ins.loc[0], f'file{ins.loc[0]}')}:{ins.loc[1]}"
        return ins.text(), src


WARP_OPS = {"shfl", "vote", "match", "redux", "activemask", "wmma", "mma", "ldmatrix", "stmatrix", "movmatrix",
            "elect"}


class Program:
    """One or several PTX modules linked together."""

    def __init__(self, modules: list[Module]) -> None:
        if not modules:
            raise EmuError(CUDA_ERROR_INVALID_PTX, "no PTX module given")
        self.modules = modules
        self.functions: dict[str, tuple[Function, int]] = {}
        self.variables: dict[str, tuple[VarDecl, int]] = {}
        self._local_names: list[dict[str, str]] = []
        self.files: dict[int, str] = {}
        multi = len(modules) > 1
        for mi, mod in enumerate(modules):
            names: dict[str, str] = {}
            for name, fn in mod.functions.items():
                names[name] = name if (fn.linkage in ("visible", "extern", "weak") or not multi) else f"{name}@m{mi}"
            for name, var in mod.variables.items():
                names[name] = name if (var.linkage in ("visible", "extern", "weak", "common") or not multi) else f"{name}@m{mi}"
            self._local_names.append(names)
            for name, fn in mod.functions.items():
                g = names[name]
                old = self.functions.get(g)
                if fn.body is not None and (old is None or old[0].body is None):
                    self.functions[g] = (fn, mi)
                elif old is None:
                    self.functions[g] = (fn, mi)
            for name, var in mod.variables.items():
                g = names[name]
                old = self.variables.get(g)
                if var.linkage != "extern" and (old is None or old[0].linkage == "extern"):
                    self.variables[g] = (var, mi)
                elif old is None:
                    self.variables[g] = (var, mi)
            for k, v in mod.files.items():
                self.files.setdefault(k, v)
        for g, (var, _) in self.variables.items():
            if var.linkage == "extern" and var.space in ("global", "const"):
                raise EmuError(CUDA_ERROR_NOT_FOUND,
                               f"extern variable {g} is defined in no loaded PTX module; with -rdc=true load "
                               "every translation unit's PTX together")
        self.entries = [g for g, (fn, _) in self.functions.items() if fn.kind == "entry" and fn.body is not None]
        # module-scope device variables, in a stable order: these get arena storage at load
        self.device_vars = [g for g, (v, _) in self.variables.items() if v.space in ("global", "const")]
        self.device_var_index = {g: k for k, g in enumerate(self.device_vars)}

    def target_arch(self, name: str) -> int:
        """The virtual architecture (``.target sm_XY`` -> XY, 0 if none) of the module defining ``name``."""
        entry = self.functions.get(name)
        mod = self.modules[entry[1]] if entry is not None else self.modules[0]
        for t in mod.target:
            m = re.fullmatch(r"sm_(\d+)[a-z]?", t)
            if m:
                return int(m.group(1))
        return 0

    def thread_limit(self, name: str) -> int | None:
        """The most threads a block of kernel ``name`` may have by its ``.maxntid``/``.reqntid``
        (``__launch_bounds__``), None when it sets none."""
        entry = self.functions.get(name)
        for directive in ("reqntid", "maxntid"):
            dims = entry[0].directives.get(directive) if entry is not None else None
            if dims:
                return math.prod(dims)
        return None

    def global_name(self, mi: int, name: str) -> str:
        return self._local_names[mi].get(name, name)

    @property
    def lazy(self) -> bool:
        """Some function bodies are not parsed yet (a large module): they are checked when used."""
        return any(fn.source is not None for fn, _ in self.functions.values())

    def check_supported(self) -> None:
        """Refuse, at load, instructions and calls the emulator cannot execute (bodies not parsed
        yet are checked when a kernel using them is built)."""
        for g, (fn, mi) in self.functions.items():
            if fn.source is not None:
                continue
            for s in fn.body or ():
                if isinstance(s, Instr):
                    check_instr(s, g)

    def kernel(self, name: str) -> KernelIR:
        if name not in self.functions or self.functions[name][0].kind != "entry":
            raise EmuError(CUDA_ERROR_NOT_FOUND, f"no kernel named {name!r} in the module")
        return _KernelBuilder(self, name).build()


_FEATURE_HEADS = {k.split(".")[0] for k in UNSUPPORTED_FEATURES}
_SUPPORTED: set[str] = set()


def check_instr(s: Instr, where: str) -> None:
    if s.op in _FEATURE_HEADS:
        full = ".".join((s.op,) + s.mods)
        for key, feature in UNSUPPORTED_FEATURES.items():
            if full == key or full.startswith(key + "."):
                raise not_supported(f"{feature} `{full}` (in {where})",
                                    "run this program on the cuda backend (a real GPU)")
    if not _SUPPORTED:
        from ..semantics import SUPPORTED_OPS
        _SUPPORTED.update(SUPPORTED_OPS)
    if s.op not in _SUPPORTED:
        full = ".".join((s.op,) + s.mods)
        raise not_supported(f"PTX instruction `{full}` (in {where})",
                            "please report it with the PTX so the emulator can learn it")


def param_layout(fn: Function) -> tuple[list[KernelParam], int]:
    """A kernel's parameters at their natural alignment, and the size of its parameter buffer."""
    params, off = [], 0
    for p in fn.params:
        size, al = decl_size(p), decl_align(p)
        off = _align(off, al)
        kind = 3 if p.count is not None or p.vector > 1 else 2 if p.type.startswith("f") else 1
        params.append(KernelParam(p.name, p.type, off, size, al, kind))
        off += size
    return params, off


class _KernelBuilder:
    def __init__(self, prog: Program, name: str) -> None:
        self.prog = prog
        self.name = name
        self.regs: dict[str, str] = {}
        self.symbols: dict[str, Symbol] = {}
        self.out: list = []
        self.local_size = 0
        self.shared_order: list[str] = []
        self.dyn_align = 16
        self.counter = 0
        self.device_kernels: dict[int, tuple[str, int]] | None = None

    def build(self) -> KernelIR:
        fn, mi = self.prog.functions[self.name]
        params, param_size = param_layout(fn)
        for p, kp in zip(fn.params, params):
            self.symbols[p.name] = Symbol(p.name, "kparam", kp.offset, kp.size, p)
        self.plan = CallPlan(self.prog, self.name)
        self.expand(fn, mi, "", {}, None, [self.name])
        if self.plan.used:
            self.plan.expand_functions(self)
        shared_static = 0
        for g in self.shared_order:
            sym = self.symbols[g]
            if sym.decl is not None and (sym.decl.count == 0 or sym.decl.linkage == "extern"):
                continue
            shared_static = _align(shared_static, decl_align(sym.decl))
            sym.offset = shared_static
            shared_static += sym.size
        dyn_off = _align(shared_static, self.dyn_align)
        for g in self.shared_order:
            sym = self.symbols[g]
            if sym.decl is not None and (sym.decl.count == 0 or sym.decl.linkage == "extern"):
                sym.offset = dyn_off
        blocks = self.split()
        return KernelIR(self.name, params, param_size, self.regs, blocks, self.symbols, shared_static,
                        self.dyn_align, _align(self.local_size, 16), dict(self.prog.files),
                        sum(len(b.instrs) for b in blocks), self.plan if self.plan.used else None,
                        self.device_kernels)

    # ---- inlining ----------------------------------------------------------------------------
    def add_local(self, unique: str, decl: VarDecl) -> None:
        al = decl_align(decl)
        self.local_size = _align(self.local_size, al)
        self.symbols[unique] = Symbol(unique, "local", self.local_size, decl_size(decl), decl)
        self.local_size += max(decl_size(decl), 1)

    def expand(self, fn: Function, mi: int, prefix: str, pmap: dict[str, str], ret_label: str | None,
               stack: list[str]) -> None:
        if fn.source is not None:           # parsed now: check it as a small module is at load
            ensure_body(fn)
            for s in fn.body:
                if isinstance(s, Instr):
                    check_instr(s, fn.name)
        for r, t in fn.regs.items():
            self.regs[prefix + r] = t
        local_names: dict[str, str] = {}
        for d in fn.locals:
            unique = prefix + d.name
            local_names[d.name] = unique
            if d.space in ("local", "param"):
                self.add_local(unique, d)
            elif d.space == "shared":
                self.symbols[unique] = Symbol(unique, "shared", 0, decl_size(d), d)
                self.shared_order.append(unique)
            else:
                raise not_supported(f".{d.space} variable declared inside a function body ({d.name})")
        labels = {s.name for s in fn.body if isinstance(s, Label)}

        def sym(name: str, off: int) -> Sym:
            if name in local_names:
                return Sym(local_names[name], off)
            if name in pmap:
                return Sym(pmap[name], off)
            if name in labels:
                return Sym(prefix + name, off)
            if prefix == "" and name in self.symbols:
                return Sym(name, off)
            g = self.prog.global_name(mi, name)
            if g in self.prog.variables:
                var, _ = self.prog.variables[g]
                if g not in self.symbols:
                    if var.space == "shared":
                        self.symbols[g] = Symbol(g, "shared", 0, decl_size(var), var)
                        self.shared_order.append(g)
                        if var.count == 0 or var.linkage == "extern":
                            self.dyn_align = max(self.dyn_align, decl_align(var))
                    elif var.space in ("global", "const"):
                        self.symbols[g] = Symbol(g, "global", self.prog.device_var_index[g], decl_size(var), var)
                    else:
                        raise not_supported(f"module-scope .{var.space} variable {name}")
                return Sym(g, off)
            if g in self.prog.functions:
                self.symbols.setdefault(g, Symbol(g, "func", function_address(self.prog, g)))
                return Sym(g, off)
            raise EmuError(CUDA_ERROR_INVALID_PTX, f"undefined symbol {name} in {fn.name}")

        def mapo(o):
            if isinstance(o, Reg):
                return Reg(prefix + o.name) if prefix else o
            if isinstance(o, Sym):
                return sym(o.name, o.offset)
            if isinstance(o, Addr):
                return Addr(mapo(o.base) if o.base is not None else None, o.offset)
            if isinstance(o, Vec):
                return Vec(tuple(mapo(i) for i in o.items))
            if isinstance(o, Pair):
                return Pair(mapo(o.first), mapo(o.second))
            if isinstance(o, Not):
                return Not(mapo(o.operand))
            if isinstance(o, Group):
                return Group(tuple(mapo(i) for i in o.items))
            return o

        for s in fn.body:
            if isinstance(s, Label):
                self.out.append(Label(prefix + s.name))
                continue
            check_instr(s, fn.name)
            guard = (mapo(s.guard[0]), s.guard[1]) if s.guard else None
            if s.op == "call":
                self.call(s, mapo, guard, stack)
                continue
            if s.op == "ret" and ret_label is not None:
                self.out.append(Instr("bra", ("uni",), (Sym(ret_label),), guard, s.loc))
                continue
            self.out.append(Instr(s.op, s.mods, tuple(mapo(o) for o in s.operands), guard, s.loc))

    def call(self, s: Instr, mapo, guard, stack: list[str]) -> None:
        ops = list(s.operands)
        rets: tuple = ()
        if ops and isinstance(ops[0], Group):
            rets = ops.pop(0).items
        if not ops:
            raise EmuError(CUDA_ERROR_INVALID_PTX, "call without a target")
        target = ops.pop(0)
        args: tuple = ops.pop(0).items if ops and isinstance(ops[0], Group) else ()
        rets = tuple(mapo(r) for r in rets)
        args = tuple(mapo(a) for a in args)
        tgt = mapo(target)
        if not isinstance(tgt, Sym) or tgt.name in self.plan.real:
            self.plan.emit_call(self, s, tgt, rets, args, guard)
            return
        name = tgt.name.split("@m")[0]
        if name in ("vprintf", "__assertfail", "malloc", "free") and (
                self.prog.functions.get(tgt.name, (None,))[0] is None or self.prog.functions[tgt.name][0].body is None):
            self.out.append(Instr(name.lstrip("_"), (), rets + args, guard, s.loc))
            return
        runtime_call = call_kind(name)
        if runtime_call is not None:        # even where -lcudadevrt brought NVIDIA's implementation
            self.out.append(Instr("device_runtime", (runtime_call,), rets + args, guard, s.loc))
            if self.device_kernels is None:
                self.device_kernels = {function_address(self.prog, g): (g, param_layout(self.prog.functions[g][0])[1])
                                       for g in self.prog.entries}
            return
        fn, mi = self.prog.functions[tgt.name]
        if fn.body is None:
            raise EmuError(CUDA_ERROR_NOT_FOUND,
                           f"device function {tgt.name} is declared but defined in no loaded PTX module; with "
                           "-rdc=true load every translation unit's PTX together")
        if tgt.name in stack:
            raise not_supported(f"recursive call of {tgt.name} (call chain {' -> '.join(stack + [tgt.name])})",
                                "the emulator inlines device functions; rewrite the recursion as a loop")
        if len(stack) > MAX_INLINE_DEPTH:
            raise not_supported(f"call depth above {MAX_INLINE_DEPTH}")
        if len(args) != len(fn.params) or len(rets) > len(fn.rets):
            raise EmuError(CUDA_ERROR_INVALID_PTX, f"call of {tgt.name} with {len(args)} arguments, "
                                                   f"it takes {len(fn.params)}")
        self.counter += 1
        prefix = f"i{self.counter}_"
        pmap: dict[str, str] = {}
        pre = []
        for formal, actual in zip(fn.params, args):
            if isinstance(actual, Sym):
                pmap[formal.name] = actual.name
            else:
                # a register or constant argument: give the formal its own local slot and store it
                unique = prefix + formal.name
                self.add_local(unique, formal)
                pmap[formal.name] = unique
                pre.append(Instr("st", ("param", formal.type), (Addr(Sym(unique)), actual), None, s.loc))
        for formal, actual in zip(fn.rets, rets):
            if isinstance(actual, Sym):
                pmap[formal.name] = actual.name
            else:
                raise not_supported("call returning into a register")
        for formal in fn.rets[len(rets):]:
            unique = prefix + formal.name
            self.add_local(unique, formal)
            pmap[formal.name] = unique
        cont = f"{prefix}ret"
        if guard is not None:
            # a predicated call: branch around the inlined body
            skip = f"{prefix}skip"
            self.out.append(Instr("bra", ("uni",), (Sym(skip),), (guard[0], not guard[1]), s.loc))
            self.out.extend(pre)
            self.expand(fn, mi, prefix, pmap, cont, stack + [tgt.name])
            self.out.append(Label(cont))
            self.out.append(Label(skip))
        else:
            self.out.extend(pre)
            self.expand(fn, mi, prefix, pmap, cont, stack + [tgt.name])
            self.out.append(Label(cont))

    # ---- basic blocks ------------------------------------------------------------------------
    def split(self) -> list[Block]:
        raw: list[tuple[list[str], list[Instr]]] = [([], [])]
        for s in self.out:
            if isinstance(s, Label):
                if raw[-1][1]:
                    raw.append(([], []))
                raw[-1][0].append(s.name)
                continue
            raw[-1][1].append(s)
            if ends_block(s):
                raw.append(([], []))
        label_block = {}
        for k, (names, _) in enumerate(raw):
            for n in names:
                label_block[n] = k
        blocks = []
        n = len(raw)
        for k, (_, instrs) in enumerate(raw):
            nxt = k + 1 if k + 1 < n else EXIT
            b = Block(k, instrs, "jump", nxt)
            b.has_warp_ops = any(i.op in WARP_OPS for i in instrs)
            last = instrs[-1] if instrs else None
            if last is not None and ends_block(last):
                body = instrs[:-1]
                if last.op == "bra":
                    tgt = last.operands[0]
                    if not isinstance(tgt, Sym) or tgt.name not in label_block:
                        raise not_supported(f"branch to {tgt} (indirect branch or unknown label)")
                    t = label_block[tgt.name]
                    if last.guard is None:
                        b.kind, b.target = "jump", t
                    else:
                        b.kind, b.target, b.fallthrough, b.guard = "cbr", t, nxt, last.guard
                elif last.op in ("ret", "exit"):
                    if last.guard is None:
                        b.kind, b.target = "exit", EXIT
                    else:
                        b.kind, b.target, b.fallthrough, b.guard = "cbr", EXIT, nxt, last.guard
                elif last.op in CALL_OPS:
                    self.plan.terminate(b, last, label_block, nxt)
                else:  # barrier
                    if last.guard is not None:
                        raise not_supported("predicated barrier")
                    b.kind, b.target, b.barrier = "barrier", nxt, last
                b.instrs = body
                b.last = last
            blocks.append(b)
        for b in blocks:
            if b.target == EXIT and b.kind == "jump":
                b.kind = "exit"
            if b.kind == "barrier" and b.target == EXIT:
                b.kind = "exit"
        return blocks


def ends_block(s: Instr) -> bool:
    if s.op in ("bra", "ret", "exit") or s.op in CALL_OPS:
        return True
    if s.op in ("bar", "barrier"):
        m = s.mods
        if "warp" in m or "arrive" in m:
            return False
        return True
    return False
