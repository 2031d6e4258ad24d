"""Real calls: recursion and calls through function pointers, built as blocks of their own.

The kernel builder inlines device functions, which is sound and fast while the call graph is a tree.
A function on a cycle of the call graph (recursion), and every function whose address is taken when
the kernel calls through a register, is instead built once as blocks of its own ("real" functions).
Its local variables (``.param`` formals, depot, the call sequences of its own calls) live in a
frame on a per-thread stack in local memory, as the ABI keeps them, addressed through its frame
pointer ``call.fp<k>``; a pointer into a frame stays valid in deeper calls. A call, for each calling
lane, pushes the callee's frame and saves the callee's registers that are live after the call (and
its frame pointer); the return copies the return values into the caller's ``retval`` slots, pops
the frame and sends each lane back to its own call site.

Control moves as the kernel's other blocks do: a call ends its block (kind ``call``); the callee's
``ret`` jumps to one return block (kind ``return``) followed by a chain of compare-and-branch
blocks on the pseudo-register ``call.site``; an indirect call goes through such a chain on
``call.callee``. So lanes at different recursion depths run the same blocks together. The stack
itself is call_stack.py.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field

from ...cudafacts.limits import DEFAULTS, STACK_SIZE
from .errors import EmuError, not_supported
from .ptx.ast import Group, Imm, Instr, Label, Reg, Sym
from .ptx.parser import ensure_body

log = logging.getLogger(__name__)

# Function addresses (what `mov.u64 %rd, f;` and a table of function pointers hold): a window of
# their own, so that loading or storing through one faults.
CODE_WINDOW = 0x7C00_0000_0000
CODE_STRIDE = 16
CALL_OPS = ("callpush", "callret")
SITE_REG, CALLEE_REG, PRED_REG = "call.site", "call.callee", "call.p"
# Each thread's frames follow the kernel's own local memory: first as much stack as a GPU thread has
# by default, doubled (for every thread of the batch) whenever a call needs more.
STACK_BYTES = DEFAULTS[STACK_SIZE]


def frame_register(fid: int) -> str:
    """The pseudo-register holding real function ``fid``'s frame pointer (per lane)."""
    return f"call.fp{fid}"


def function_address(prog, name: str) -> int:
    """The device address of function ``name`` of a linked ``Program`` (stable per program)."""
    index = getattr(prog, "_function_index", None)
    if index is None:
        index = prog._function_index = {g: k for k, g in enumerate(prog.functions)}
    return CODE_WINDOW + CODE_STRIDE * (index[name] + 1)


def _calls_of(prog, g: str) -> tuple[set[str], bool, set[str]]:
    """(direct callees, has an indirect call, functions whose address it takes) of function ``g``."""
    fn, mi = prog.functions[g]
    ensure_body(fn)
    if fn.body is None:
        return set(), False, set()
    direct, taken, indirect = set(), set(), False
    for s in fn.body:
        if not isinstance(s, Instr):
            continue
        if s.op == "call":
            ops = list(s.operands)
            if ops and isinstance(ops[0], Group):
                ops.pop(0)
            target = ops[0] if ops else None
            if isinstance(target, Sym):
                direct.add(prog.global_name(mi, target.name))
            elif target is not None:
                indirect = True
            continue
        for o in s.operands:
            if isinstance(o, Sym) and prog.global_name(mi, o.name) in prog.functions:
                taken.add(prog.global_name(mi, o.name))
    return direct, indirect, taken


def _initialiser_functions(prog) -> set[str]:
    out = set()
    for var, mi in prog.variables.values():
        for item in var.init or ():
            if isinstance(item, tuple):
                g = prog.global_name(mi, item[1])
                if g in prog.functions:
                    out.add(g)
    return out


@dataclass
class RealFunction:
    """A function built once, as blocks, and called with a frame push."""
    fid: int
    name: str
    address: int
    entry: str                                    # label of its first block
    ret_label: str                                # label of its return block
    formals: list[tuple[int, int]] = field(default_factory=list)      # (local offset, size)
    ret_formals: list[tuple[int, int]] = field(default_factory=list)
    regs: list[str] = field(default_factory=list)                     # registers of its expansion
    lo: int = 0                                   # its locals' static offsets [lo, hi): a frame
    hi: int = 0
    sites: list[int] = field(default_factory=list)                    # call sites that may call it


@dataclass
class CallSite:
    index: int
    callee: RealFunction | None                   # None: through a register
    args: list[tuple[int, int]]                   # caller's argument slots (local offset, size)
    rets: list[tuple[int, int]]                   # caller's return-value slots
    cont: str                                     # label where the caller goes on
    caller: int = -1                              # fid of the calling real function, -1: the kernel
    dispatch: str = ""                            # indirect: label of the chain choosing the callee
    cont_block: int = -1
    by_address: dict = field(default_factory=dict)                    # indirect: address -> RealFunction
    saved: dict = field(default_factory=dict)     # fid -> [(register, dtype)] kept across the call


class CallPlan:
    """Which functions of a kernel are called for real, and the sites that call them."""

    def __init__(self, prog, kernel: str) -> None:
        self.prog = prog
        graph: dict[str, set[str]] = {}
        indirect = False
        taken: set[str] = set()
        todo = [kernel]
        while todo:
            g = todo.pop()
            if g in graph or g not in prog.functions:
                continue
            direct, ind, tk = _calls_of(prog, g)
            graph[g] = direct
            indirect |= ind
            taken |= tk
            todo.extend(direct)
            if indirect:
                todo.extend(taken | _initialiser_functions(prog))
        self.indirect = indirect
        self.targets = sorted(g for g in (taken | _initialiser_functions(prog)) if g in graph) if indirect else []
        cyclic = {g for g in graph if self._reaches(graph, g)}
        self.real = cyclic | set(self.targets)
        self.functions: dict[str, RealFunction] = {}
        self.sites: list[CallSite] = []
        self._queue: list[str] = []
        self._caller = -1
        self.stack_base = 0                       # where the frames start in each lane's local memory

    @staticmethod
    def _reaches(graph: dict[str, set[str]], g: str) -> bool:
        seen, todo = set(), list(graph.get(g, ()))
        while todo:
            h = todo.pop()
            if h == g:
                return True
            if h not in seen:
                seen.add(h)
                todo.extend(graph.get(h, ()))
        return False

    @property
    def used(self) -> bool:
        return bool(self.sites)

    def function(self, name: str) -> RealFunction:
        f = self.functions.get(name)
        if f is None:
            k = len(self.functions)
            f = self.functions[name] = RealFunction(k, name, function_address(self.prog, name),
                                                    f"call.f{k}.entry", f"call.f{k}.return")
            self._queue.append(name)
        return f

    # ---- building (called by the kernel builder) ----------------------------------------------
    def emit_call(self, b, s: Instr, target, rets: tuple, args: tuple, guard) -> None:
        """A call site: the caller's argument slots, a block-ending push, the continuation."""
        k = len(self.sites)
        callee = self.function(target.name) if isinstance(target, Sym) else None
        if callee is not None:
            fn = self.prog.functions[target.name][0]
            if len(args) != len(fn.params) or len(rets) > len(fn.rets):
                raise EmuError(218, f"call of {target.name} with {len(args)} arguments, it takes {len(fn.params)}")
        site = CallSite(k, callee, [self._slot(b, a, "argument") for a in args],
                        [self._slot(b, r, "return value") for r in rets], f"call.s{k}.cont", self._caller)
        self.sites.append(site)
        ops: tuple = (Imm(k, "int"),)
        if callee is None:
            site.dispatch = f"call.s{k}.dispatch"
            ops += (target,)
        else:
            callee.sites.append(k)
        if guard is not None:
            skip = f"call.s{k}.skip"
            b.out.append(Instr("bra", ("uni",), (Sym(skip),), (guard[0], not guard[1]), s.loc))
        b.out.append(Instr("callpush", (), ops, None, s.loc))
        b.out.append(Label(site.cont))
        if guard is not None:
            b.out.append(Label(skip))

    def _slot(self, b, o, what: str) -> tuple[int, int]:
        sym = b.symbols.get(o.name) if isinstance(o, Sym) else None
        if sym is None or sym.space != "local":
            raise not_supported(f"call {what} {o} that is not a .param variable of the caller")
        return sym.offset + o.offset, sym.size - o.offset

    def expand_functions(self, b) -> None:
        """Build every real function reached, then the return and dispatch chains."""
        b.regs.update({SITE_REG: "u32", CALLEE_REG: "u32", PRED_REG: "pred"})
        if self.indirect:
            for g in self.targets:
                self.function(g)
        while self._queue:
            name = self._queue.pop(0)
            f = self.functions[name]
            fn, mi = self.prog.functions[name]
            if fn.body is None:
                raise EmuError(500, f"device function {name} is declared but defined in no loaded PTX module")
            prefix = f"callf{f.fid}_"  # word characters only, as the inliner's prefixes
            before = set(b.regs)
            before_syms = set(b.symbols)
            self._caller = f.fid
            b.local_size = -(-b.local_size // 16) * 16
            f.lo = b.local_size
            pmap: dict[str, str] = {}
            for formal in fn.params:
                b.add_local(prefix + formal.name, formal)
                sym = b.symbols[prefix + formal.name]
                f.formals.append((sym.offset, sym.size))
                pmap[formal.name] = prefix + formal.name
            for formal in fn.rets:
                b.add_local(prefix + formal.name, formal)
                sym = b.symbols[prefix + formal.name]
                f.ret_formals.append((sym.offset, sym.size))
                pmap[formal.name] = prefix + formal.name
            b.out.append(Instr("exit", (), ()))          # nothing falls into a function body
            b.out.append(Label(f.entry))
            b.expand(fn, mi, prefix, pmap, f.ret_label, [name])
            b.out.append(Instr("bra", ("uni",), (Sym(f.ret_label),)))
            f.hi = b.local_size
            f.regs = [r for r in b.regs if r not in before]
            for g in b.symbols.keys() - before_syms:
                sym = b.symbols[g]
                if sym.space == "local" and f.lo <= sym.offset < f.hi:
                    sym.frame = f.fid
            b.regs[frame_register(f.fid)] = "u64"
        self._caller = -1
        log.debug("%s: %d call sites to functions called for real: %s", b.name, len(self.sites),
                  ", ".join(self.functions))
        self.stack_base = -(-b.local_size // 16) * 16
        b.local_size = self.stack_base + STACK_BYTES
        self.prog = None                          # the kernel's IR keeps the plan, not the program
        for site in self.sites:
            if site.callee is None:
                site.by_address = {f.address: f for g, f in self.functions.items() if g in self.targets}
                for f in site.by_address.values():
                    f.sites.append(site.index)
        b.out.append(Instr("exit", (), ()))
        for f in self.functions.values():
            b.out.append(Label(f.ret_label))
            b.out.append(Instr("callret", (), (Imm(f.fid, "int"),)))
            self._chain(b, SITE_REG, [(k, self.sites[k].cont) for k in f.sites])
        for site in self.sites:
            if site.callee is None:
                b.out.append(Label(site.dispatch))
                self._chain(b, CALLEE_REG, [(f.fid, f.entry) for f in site.by_address.values()])

    @staticmethod
    def _chain(b, reg: str, cases: list[tuple[int, str]]) -> None:
        """Compare-and-branch blocks sending each lane to the label of its case."""
        if not cases:
            b.out.append(Instr("exit", (), ()))
            return
        for value, label in cases[:-1]:
            b.out.append(Instr("setp", ("eq", "u32"), (Reg(PRED_REG), Reg(reg), Imm(value, "int"))))
            b.out.append(Instr("bra", (), (Sym(label),), (Reg(PRED_REG), False)))
        b.out.append(Instr("bra", ("uni",), (Sym(cases[-1][1]),)))

    def terminate(self, blk, last: Instr, label_block: dict[str, int], nxt: int) -> None:
        """Set the kind and successors of a block ending in a call push or a return."""
        if last.op == "callpush":
            site = self.sites[last.operands[0].value]
            entry = site.dispatch if site.callee is None else site.callee.entry
            blk.kind, blk.target, blk.fallthrough = "call", label_block[entry], label_block[site.cont]
            site.cont_block = label_block[site.cont]
        else:
            blk.kind, blk.target = "return", nxt

    # ---- after liveness (called by the code generator) -----------------------------------------
    def plan_saves(self, live_in: list[set[str]], reg_dtypes: dict) -> None:
        """Per site and callee, the callee's registers the caller still needs after the call."""
        for site in self.sites:
            live = live_in[site.cont_block]
            callees = [site.callee] if site.callee is not None else list(site.by_address.values())
            for f in callees:
                site.saved[f.fid] = [(r, reg_dtypes[r]) for r in f.regs if r in live and r in reg_dtypes]
