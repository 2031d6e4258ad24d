"""The per-lane call stack of a running batch: frames pushed and popped by real calls (calls.py).

The generated code of a block ending in a call runs ``callpush`` after its register write-back; the
return block of a function runs ``callret``. Both act on the lanes of the block, each at its own
depth: saved registers and frame pointers live in per-function stacks indexed (depth, lane), and
each lane's frames in its local memory, which grows for the whole batch when a frame does not fit.
"""
from __future__ import annotations

import numpy as np

from .calls import CALLEE_REG, SITE_REG, CallPlan, CallSite, RealFunction, frame_register
from .errors import CUDA_ERROR_ILLEGAL_ADDRESS, CUDA_ERROR_LAUNCH_FAILED, CUDA_ERROR_OUT_OF_MEMORY, EmuError
from .rt import put

LOCAL_BUDGET = 1 << 30            # bytes of local memory per batch the stack may grow to
MAX_DEPTH = 1 << 16               # frames of one function per thread
STACK_BUDGET = 2 << 30            # bytes of saved registers per batch


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
    granted = X.cfg.local_limit
    if granted is not None and X.N * ls > granted:
        raise EmuError(CUDA_ERROR_OUT_OF_MEMORY, f"calling {f.name}: {X.N} threads would need {ls} bytes of "
                                                 f"local memory each, past the {granted} bytes the session's "
                                                 "device memory share (--session-memory, --device-memory) left "
                                                 "this launch; recurse less deeply or free device memory")
    grown = np.zeros(X.N * ls, np.uint8)
    grown.reshape(X.N, ls)[:, :X.LS] = X.local.reshape(X.N, X.LS)
    X.local, X.LS = grown, ls
    X._lviews.clear()


def _push(X, st: CallStack, f: RealFunction, site: CallSite, lanes: np.ndarray) -> None:
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
