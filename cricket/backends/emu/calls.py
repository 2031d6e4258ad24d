"""Real calls: recursion and calls through function pointers, with a per-lane call stack.

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
``call.callee``. So lanes at different recursion depths run the same blocks together.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np

from ...cudafacts.limits import DEFAULTS, STACK_SIZE
from .errors import CUDA_ERROR_ILLEGAL_ADDRESS, CUDA_ERROR_LAUNCH_FAILED, EmuError, not_supported
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
LOCAL_BUDGET = 1 << 30            # bytes of local memory per batch the stack may grow to
MAX_DEPTH = 1 << 16               # frames of one function per thread
STACK_BUDGET = 2 << 30            # bytes of saved registers per batch


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
        self.stack_base = -(-b.local_size // 16) * 16
        b.local_size = self.stack_base + STACK_BYTES
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


# ---- run time (called by the generated block code) ----------------------------------------------
class CallStack:
    """Per-lane frames of a running batch: the stack pointer, and per real function the call sites,
    saved frame pointers and saved registers of its active calls."""

    def __init__(self, X, plan: CallPlan) -> None:
        self.N = X.N
        self.sp = np.full(X.N, plan.stack_base, np.int64)
        self.depth: dict[int, np.ndarray] = {}
        self.sites: dict[int, np.ndarray] = {}
        self.fps: dict[int, np.ndarray] = {}
        self.regs: dict[tuple[int, str], np.ndarray] = {}
        self.bytes = 0

    def _grow(self, f: RealFunction, need: int, saved) -> None:
        """Make room for ``need`` calls of ``f`` (doubling), within the depth and memory limits."""
        cur = self.sites.get(f.fid)
        cap = 0 if cur is None else cur.shape[0]
        if need > cap:
            if need > MAX_DEPTH:
                raise EmuError(CUDA_ERROR_LAUNCH_FAILED, f"call stack overflow: {f.name} recursed more than "
                                                         f"{MAX_DEPTH} levels deep")
            cap = max(cap, 4)
            while cap < need:
                cap *= 2
            self.sites[f.fid] = self._grown(cur, cap, np.int32)
            self.fps[f.fid] = self._grown(self.fps.get(f.fid), cap, np.uint64)
            for key in [k for k in self.regs if k[0] == f.fid]:
                self.regs[key] = self._grown(self.regs[key], cap, self.regs[key].dtype)
        for r, dt in saved:
            if (f.fid, r) not in self.regs:
                self.regs[(f.fid, r)] = self._grown(None, cap, dt)
        if self.bytes > STACK_BUDGET:
            raise EmuError(CUDA_ERROR_LAUNCH_FAILED, f"the saved registers of {self.N} threads need more than "
                                                     f"{STACK_BUDGET >> 20} MiB; launch fewer threads at once "
                                                     "(a smaller max_lanes) or recurse less deeply")

    def _grown(self, old: np.ndarray | None, cap: int, dt) -> np.ndarray:
        a = np.zeros((cap, self.N), dt)
        self.bytes += a.nbytes - (0 if old is None else old.nbytes)
        if old is not None:
            a[: old.shape[0]] = old
        return a


def _stack(X, plan: CallPlan) -> CallStack:
    st = X.__dict__.get("call_stack")
    if st is None:
        st = X.call_stack = CallStack(X, plan)
    return st


def _lanes(X, L) -> np.ndarray:
    return np.arange(X.N) if L is None else L


def _fp(X, fid: int, lanes: np.ndarray) -> np.ndarray:
    """Frame pointers of ``lanes`` for real function ``fid`` (0 for the kernel's own locals)."""
    if fid < 0:
        return np.zeros(len(lanes), np.int64)
    v = X.R.get(frame_register(fid))
    v = np.uint64(0) if v is None else v
    return np.broadcast_to(v[lanes] if type(v) is np.ndarray else v, (len(lanes),)).astype(np.int64)


def _copy(frame: np.ndarray, lanes: np.ndarray, src: np.ndarray, dst: np.ndarray, size: int) -> None:
    """Copy ``size`` bytes per lane within each lane's local memory, at per-lane offsets."""
    k = np.arange(size)
    rows = lanes[:, None]
    frame[rows, dst[:, None] + k] = frame[rows, src[:, None] + k]


def _grow_local(X, need: int, f: RealFunction) -> None:
    """Double every lane's local memory until ``need`` bytes fit (offsets within a lane stay valid)."""
    ls = X.LS
    while ls < need:
        ls *= 2
    if X.N * ls > LOCAL_BUDGET:
        raise EmuError(CUDA_ERROR_LAUNCH_FAILED, f"stack overflow calling {f.name}: {X.N} threads would need "
                                                 f"{ls} bytes of local memory each; launch fewer threads at once "
                                                 "(a smaller max_lanes) or recurse less deeply")
    grown = np.zeros(X.N * ls, np.uint8)
    grown.reshape(X.N, ls)[:, :X.LS] = X.local.reshape(X.N, X.LS)
    X.local, X.LS = grown, ls
    X._lviews.clear()


def _push(X, st: CallStack, f: RealFunction, site: CallSite, lanes: np.ndarray) -> None:
    from .rt import put
    depth = st.depth.get(f.fid)
    if depth is None:
        depth = st.depth[f.fid] = np.zeros(X.N, np.int64)
    d = depth[lanes]
    saved = site.saved.get(f.fid, ())
    st._grow(f, int(d.max()) + 1, saved)
    base = st.sp[lanes]
    size = -(-(f.hi - f.lo) // 16) * 16
    if int(base.max()) + size > X.LS:
        _grow_local(X, int(base.max()) + size, f)
    R = X.R
    for r, dt in saved:
        v = R.get(r)
        st.regs[(f.fid, r)][d, lanes] = 0 if v is None else (v[lanes] if type(v) is np.ndarray else v)
    st.sites[f.fid][d, lanes] = site.index
    caller_fp = _fp(X, site.caller, lanes)
    st.fps[f.fid][d, lanes] = _fp(X, f.fid, lanes).astype(np.uint64)
    depth[lanes] = d + 1
    fp = base - f.lo
    st.sp[lanes] = base + size
    put(X, frame_register(f.fid), lanes, fp.astype(np.uint64), np.uint64)
    frame = X.local.reshape(X.N, X.LS)
    for (src, n), (dst, fsize) in zip(site.args, f.formals):
        _copy(frame, lanes, caller_fp + src, fp + dst, min(n, fsize))


def callpush(X, plan: CallPlan, site: CallSite, L, target=None) -> None:
    """Call from ``site`` for lanes ``L``; ``target``: the function addresses of an indirect call."""
    from .rt import put
    st = _stack(X, plan)
    lanes = _lanes(X, L)
    if site.callee is not None:
        _push(X, st, site.callee, site, lanes)
        return
    addrs = np.broadcast_to(np.asarray(target, dtype=np.uint64), lanes.shape)
    for a in np.unique(addrs):
        f = site.by_address.get(int(a))
        sub = lanes[addrs == a]
        if f is None:
            raise EmuError(CUDA_ERROR_ILLEGAL_ADDRESS, f"call through function pointer {int(a):#x}, which is "
                                                       "the address of no device function of this kernel")
        _push(X, st, f, site, sub)
        put(X, CALLEE_REG, sub, np.uint32(f.fid), np.uint32)


def callret(X, plan: CallPlan, f: RealFunction, L) -> None:
    """Return from ``f`` for lanes ``L``: hand back the return values, pop their frames."""
    from .rt import put
    st = _stack(X, plan)
    lanes = _lanes(X, L)
    depth = st.depth[f.fid]
    d = depth[lanes] - 1
    sites = st.sites[f.fid][d, lanes]
    frame = X.local.reshape(X.N, X.LS)
    fp = _fp(X, f.fid, lanes)
    k16 = [np.arange(size) for _, size in f.ret_formals]
    values = [frame[lanes[:, None], (fp + off)[:, None] + k] for (off, _), k in zip(f.ret_formals, k16)]
    st.sp[lanes] = fp + f.lo
    put(X, frame_register(f.fid), lanes, st.fps[f.fid][d, lanes], np.uint64)
    depth[lanes] = d
    for s in np.unique(sites):
        site = plan.sites[int(s)]
        m = sites == s
        sub, dd = lanes[m], d[m]
        for r, dt in site.saved.get(f.fid, ()):
            put(X, r, sub, st.regs[(f.fid, r)][dd, sub], dt)
        caller_fp = _fp(X, site.caller, sub)
        for (off, size), v in zip(site.rets, values):
            n = min(size, v.shape[1])
            frame[sub[:, None], (caller_fp + off)[:, None] + np.arange(n)] = v[m, :n]
    put(X, SITE_REG, lanes, sites.astype(np.uint32), np.uint32)
