"""mbarrier objects and bulk asynchronous copies (cp.async.bulk, cp.async.mbarrier.arrive).

The emulator performs every asynchronous copy at once, in program order, so a copy is complete
before any later instruction of any thread looks at its destination; what is left to emulate is
the bookkeeping programs wait on. An mbarrier is a 64-bit word in shared memory (the PTX ISA leaves
its layout opaque); here it holds the pending arrivals, the expected arrivals of each phase, the
pending transaction bytes (tx-count) and the phase parity. A phase completes when its pending
arrivals and its tx-count both reach zero: the parity flips and the pending count starts again at
the expected count. The state an arrive returns holds the phase it arrived on and the arrivals
still pending after it.
"""
from __future__ import annotations

import numpy as np

from .atomics import atomic_apply
from .errors import CUDA_ERROR_ILLEGAL_ADDRESS, CUDA_ERROR_LAUNCH_FAILED, EmuError, not_supported
from .memory import SHARED_WINDOW, WINDOW_SHIFT, WIN_SHARED
from .ptx.ast import Instr, Sink

_FIELD = 21                                  # bits of each count (the ISA allows counts < 2**20)
_MASK = (1 << _FIELD) - 1
_PHASE = 63
_U64 = np.uint64


def _unpack(w: int) -> list[int]:
    tx = (w >> (2 * _FIELD)) & _MASK
    if tx >> (_FIELD - 1):
        tx -= 1 << _FIELD                    # complete_tx may run ahead of expect_tx
    return [w & _MASK, (w >> _FIELD) & _MASK, tx, w >> _PHASE]


def _pack(pending: int, expected: int, tx: int, phase: int) -> int:
    return pending | expected << _FIELD | (tx & _MASK) << (2 * _FIELD) | phase << _PHASE


def _indices(X, space: str, addr, L, mask):
    """(u64 indices into the batch's shared memory of the lanes that act, selector over L or None)."""
    addr, sel = X._apply_mask(addr, mask)
    if sel is False:
        return np.zeros(0, np.intp), np.zeros(X._lane_count(L), bool)
    if space == "generic":
        a = np.asarray(addr, dtype=_U64)
        if np.any((a >> _U64(WINDOW_SHIFT)) != _U64(WIN_SHARED)):
            raise EmuError(CUDA_ERROR_ILLEGAL_ADDRESS, "mbarrier object outside shared memory")
        addr = a - _U64(SHARED_WINDOW)
        if addr.ndim == 0:
            addr = addr[()]
    elif space != "shared":
        raise not_supported(f"mbarrier in .{space} memory")
    idx = X._shared_index(addr, 8, 8, L, sel)
    n = X._lane_count(L) if sel is None else int(np.count_nonzero(sel))
    return np.broadcast_to(np.asarray(idx, dtype=np.intp), (n,)), sel


def _scatter(values: list[int], sel, n: int, dt=_U64) -> np.ndarray:
    """Results of the acting lanes back over all ``n`` lanes (0 for the others)."""
    got = np.array(values, dtype=dt) if values else np.zeros(0, dt)
    if sel is None:
        return got
    out = np.zeros(n, dt)
    out[sel] = got
    return out


def _complete_if_done(f: list[int]) -> None:
    if f[0] == 0 and f[2] == 0:
        f[0], f[3] = f[1], f[3] ^ 1


def mbarrier_update(X, kind: str, space: str, addr, arg, L, mask, drop: bool = False, tx: int | np.ndarray = 0,
                    complete: bool = True):
    """Apply ``kind`` (init, inval, arrive, expect_tx, complete_tx, test, parity) for the acting lanes
    in lane order; returns per lane the arrive state or the wait result (as uint64)."""
    n = X._lane_count(L)
    idx, sel = _indices(X, space, addr, L, mask)
    if not len(idx):
        return np.zeros(n, _U64)
    view = X._sview(_U64)
    args = np.broadcast_to(np.asarray(arg, dtype=np.int64), (n,))
    if sel is not None:
        args = args[sel]
    txs = np.broadcast_to(np.asarray(tx, dtype=np.int64), (n,))
    if sel is not None:
        txs = txs[sel]
    words: dict[int, list[int]] = {}
    out = []
    for k, i in enumerate(idx.tolist()):
        a = int(args[k])
        if kind == "init":
            if not 0 < a <= _MASK >> 1:
                raise EmuError(CUDA_ERROR_LAUNCH_FAILED, f"mbarrier.init with count {a} (must be 1 to 2**20-1)")
            words[i] = [a, a, 0, 0]
            out.append(0)
            continue
        if kind == "inval":
            words[i] = [0, 0, 0, 0]
            out.append(0)
            continue
        f = words.get(i)
        if f is None:
            f = words[i] = _unpack(int(view[i]))
        if kind in ("test", "parity"):
            want = (a >> _PHASE) & 1 if kind == "test" else a & 1
            out.append(int(f[3] != want))
            continue
        if kind == "expect_tx":
            f[2] += a
        elif kind == "complete_tx":
            f[2] -= a
            _complete_if_done(f)
        else:                                # arrive (its count in a, expect_tx bytes in tx)
            f[2] += int(txs[k])
            if a > f[0]:
                raise EmuError(CUDA_ERROR_LAUNCH_FAILED, f"mbarrier arrive of {a} with only {f[0]} arrivals "
                                                         "pending in this phase")
            f[0] -= a
            if drop:
                f[1] -= a
            state = _pack(f[0], 0, 0, f[3])
            if complete:
                _complete_if_done(f)
            out.append(state)
            continue
        out.append(0)
    for i, f in words.items():
        view[i] = _U64(_pack(*f))
    return _scatter(out, sel, n)


def pending_count(state):
    """mbarrier.pending_count: the arrivals still pending after the arrive that gave ``state``."""
    return (np.asarray(state, dtype=_U64) & _U64(_MASK)).astype(np.uint32)


def bulk_copy(X, dst_space: str, daddr, src_space: str, saddr, size, L, mask) -> None:
    """cp.async.bulk: ``size`` bytes (a multiple of 16) per acting lane, at once."""
    sizes = np.broadcast_to(np.asarray(size, dtype=np.int64), (X._lane_count(L),))
    if np.any(sizes % 16):
        raise EmuError(CUDA_ERROR_LAUNCH_FAILED, "cp.async.bulk size that is not a multiple of 16 bytes")
    ld = getattr(X, f"ld_{src_space}")
    st = getattr(X, f"st_{dst_space}")
    m = np.broadcast_to(np.asarray(mask, dtype=bool), sizes.shape) if mask is not True else np.ones(sizes.shape, bool)
    for k in range(0, int(sizes.max(initial=0)), 16):
        active = m & (k < sizes)
        if not active.any():
            break
        off = _U64(k)
        v = ld(saddr + off if type(saddr) is not int else saddr + k, np.uint64, 2, L, active)
        st(daddr + off if type(daddr) is not int else daddr + k, np.uint64, v, L, active)


_REDUCE_TYPES = {"b32": np.uint32, "u32": np.uint32, "s32": np.int32, "b64": np.uint64, "u64": np.uint64,
                 "s64": np.int64, "f16": np.float16, "f32": np.float32, "f64": np.float64}


def bulk_reduce(X, dst_space: str, daddr, saddr, size, op: str, dt, L, mask) -> None:
    """cp.reduce.async.bulk: ``size`` bytes of shared memory reduced element by element into
    ``daddr`` (global, or this CTA's shared memory), per acting lane, at once."""
    n = X._lane_count(L)
    es = np.dtype(dt).itemsize
    at = [np.broadcast_to(np.asarray(v).astype(np.uint64), (n,)) for v in (daddr, saddr, size)]
    for pos in X._positions(L, mask):
        d, s_, nbytes = (int(a[pos]) for a in at)
        if nbytes % 16:
            raise EmuError(CUDA_ERROR_LAUNCH_FAILED, "cp.reduce.async.bulk size that is not a multiple of 16 bytes")
        offs = np.arange(nbytes // es, dtype=np.uint64) * _U64(es)
        lane = np.array([pos if L is None else L[pos]], np.intp)
        vals = X._sview(dt)[X._shared_index(_U64(s_) + offs, es, es, lane, None)]
        if dst_space == "global":
            view, idx = X.mem.view(dt), X.mem.check(_U64(d) + offs, es, es)
        else:
            view, idx = X._sview(dt), X._shared_index(_U64(d) + offs, es, es, lane, None)
        atomic_apply(view, np.asarray(idx, np.intp), op, vals, None, np.dtype(dt))


class AsyncEmitters:
    """Code generation for mbarrier and cp.async.bulk (mixin placed before InstructionEmitters)."""

    def _mbar_addr(self, ins: Instr, o) -> tuple[str, str]:
        space = self.mem_space(ins)
        sp, a = self.address(o, space)
        if sp not in ("shared", "generic"):
            raise not_supported(f"mbarrier in .{sp} memory (`{ins.text()}`)")
        return sp, a

    def op_mbarrier(self, ins: Instr, idx: int) -> None:
        mods = ins.mods
        ops = ins.operands
        m = self.mask_expr()
        self.at(idx)
        if "pending_count" in mods:
            self.assign(ops[0], f"mbar_pending({self.src(ops[1], 'u64')})", "u32")
            return
        if "init" in mods or "inval" in mods:
            sp, a = self._mbar_addr(ins, ops[0])
            count = self.src(ops[1], "u32") if "init" in mods else "0"
            kind = "init" if "init" in mods else "inval"
            self.emit(f"mbar(X, {kind!r}, {sp!r}, {a}, {count}, L, {m})")
            return
        if "expect_tx" in mods and not ("arrive" in mods or "arrive_drop" in mods) or "complete_tx" in mods:
            sp, a = self._mbar_addr(ins, ops[0])
            kind = "complete_tx" if "complete_tx" in mods else "expect_tx"
            self.emit(f"mbar(X, {kind!r}, {sp!r}, {a}, {self.src(ops[1], 'u32')}, L, {m})")
            return
        if "test_wait" in mods or "try_wait" in mods:
            sp, a = self._mbar_addr(ins, ops[1])
            kind = "parity" if "parity" in mods else "test"
            r = self.new_tmp()
            self.emit(f"{r} = mbar(X, {kind!r}, {sp!r}, {a}, {self.src(ops[2], 'u64')}, L, {m})")
            self.assign(ops[0], f"({r} != 0)", "b_")
            return
        if "arrive" in mods or "arrive_drop" in mods:
            sp, a = self._mbar_addr(ins, ops[1])
            drop = "arrive_drop" in mods
            count, tx = "1", "0"
            if "expect_tx" in mods:
                tx = self.src(ops[2], "u32")
            elif len(ops) > 2:
                count = self.src(ops[2], "u32")
            complete = "noComplete" not in mods
            r = self.new_tmp()
            self.emit(f"{r} = mbar(X, 'arrive', {sp!r}, {a}, {count}, L, {m}, {drop}, {tx}, {complete})")
            if not isinstance(ops[0], Sink):
                self.assign(ops[0], r, "u64")
            return
        raise not_supported(f"mbarrier form `{ins.text()}`")

    def op_cp(self, ins: Instr, idx: int) -> None:
        mods = ins.mods
        if "async" not in mods or not ("bulk" in mods or "mbarrier" in mods):
            return super().op_cp(ins, idx)
        m = self.mask_expr()
        self.at(idx)
        if "mbarrier" in mods and "bulk" not in mods:
            # cp.async.mbarrier.arrive{.noinc}: copies are done already, so the arrive happens now;
            # without .noinc the pending count is first raised by one, which the arrive takes back
            if "noinc" in mods:
                sp, a = self._mbar_addr(ins, ins.operands[0])
                self.emit(f"mbar(X, 'arrive', {sp!r}, {a}, 1, L, {m})")
            return
        if "commit_group" in mods or "wait_group" in mods or "wait_all" in mods or "prefetch" in mods:
            return                               # bulk groups: every copy is complete already
        if "tensor" in mods:
            return self.op_tensor_copy(ins, idx)
        spaces = [x.split("::")[0] for x in mods if x.split("::")[0] in ("shared", "global")]
        if len(spaces) != 2:
            raise not_supported(f"cp.async.bulk form `{ins.text()}`")
        dsp, daddr = self.address(ins.operands[0], spaces[0])
        ssp, saddr = self.address(ins.operands[1], spaces[1])
        size = self.src(ins.operands[2], "u32")
        if "reduce" in mods:
            op = next((x for x in mods if x in ("add", "min", "max", "inc", "dec", "and", "or", "xor")), None)
            t = next((x for x in mods if x in _REDUCE_TYPES), None)
            if op is None or t is None or ssp != "shared" or dsp not in ("global", "shared"):
                raise not_supported(f"cp.reduce.async.bulk form `{ins.text()}`")
            self.kc.ns.setdefault("bulk_reduce", bulk_reduce)
            dt = np.dtype(_REDUCE_TYPES[t]).name
            self.emit(f"bulk_reduce(X, {dsp!r}, {daddr}, {saddr}, {size}, {op!r}, np.{dt}, L, {m})")
        else:
            self.emit(f"bulk_copy(X, {dsp!r}, {daddr}, {ssp!r}, {saddr}, {size}, L, {m})")
        if any(x.startswith("mbarrier") for x in mods):
            sp, a = self._mbar_addr(ins, ins.operands[3])
            self.emit(f"mbar(X, 'complete_tx', {sp!r}, {a}, {size}, L, {m})")

