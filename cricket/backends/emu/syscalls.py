"""Device-side system calls: trap, assert and printf (vprintf), written to the caller's sink."""
from __future__ import annotations

import re
import struct

import numpy as np

from .errors import CUDA_ERROR_ASSERT, CUDA_ERROR_ILLEGAL_ADDRESS, CUDA_ERROR_LAUNCH_FAILED, CUDA_ERROR_NOT_SUPPORTED, EmuError
from .memory import LOCAL_WINDOW, WINDOW_SHIFT, WIN_GLOBAL, WIN_LOCAL

ndarray = np.ndarray


class DeviceCalls:
    """Mixin of ``Batch``: __trap(), __assertfail() and vprintf()."""

    # ---- traps, asserts, printf --------------------------------------------------------------
    def _active_lanes(self, L, mask):
        lanes = self._lanes(L)
        if mask is True:
            return lanes
        if type(mask) is not ndarray:
            return lanes if mask else lanes[:0]
        return lanes[np.broadcast_to(mask, (len(lanes),))]

    def _coords(self, lane: int) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
        bx, by, _ = self.cfg.block
        gx, gy, _ = self.cfg.grid
        t = lane % self.T
        c = self.c0 + lane // self.T
        return (c % gx, (c // gx) % gy, c // (gx * gy)), (t % bx, (t // bx) % by, t // (bx * by))

    def trap(self, L, mask):
        lanes = self._active_lanes(L, mask)
        if len(lanes):
            blk, thr = self._coords(int(lanes[0]))
            raise EmuError(CUDA_ERROR_LAUNCH_FAILED, f"trap instruction executed (__trap()) by block {list(blk)}, "
                                                     f"thread {list(thr)}")

    def _cstring(self, addr: int, limit: int = 1 << 16) -> str:
        if addr == 0:
            return "(null)"
        win = addr >> WINDOW_SHIFT
        if win != WIN_GLOBAL:
            raise EmuError(CUDA_ERROR_ILLEGAL_ADDRESS, f"string argument at {addr:#x} is not in global memory")
        a = self.mem.allocation_of(addr)
        if a is None:
            raise EmuError(CUDA_ERROR_ILLEGAL_ADDRESS, f"string argument at {addr:#x} is outside every allocation")
        end = min(a[0] + a[1], addr + limit)
        raw = self.mem.read(addr, end - addr)
        return raw.split(b"\0", 1)[0].decode("utf-8", "replace")

    def _lane_value(self, v, k):
        return v[k] if type(v) is ndarray else v

    def assertfail(self, msg, file, line, func, charsize, L, mask):
        lanes = self._active_lanes(L, mask)
        if not len(lanes):
            return
        lines = []
        for k_, lane in enumerate(lanes[:32]):
            k = int(np.flatnonzero(self._lanes(L) == lane)[0]) if L is not None else int(lane)
            blk, thr = self._coords(int(lane))
            lines.append(f"{self._cstring(int(self._lane_value(file, k)))}:{int(self._lane_value(line, k))}: "
                         f"{self._cstring(int(self._lane_value(func, k)))}: block: [{blk[0]},{blk[1]},{blk[2]}], "
                         f"thread: [{thr[0]},{thr[1]},{thr[2]}] Assertion `"
                         f"{self._cstring(int(self._lane_value(msg, k)))}` failed.\n")
        for s in lines:
            self.sink(s)
        raise EmuError(CUDA_ERROR_ASSERT, f"device-side assert triggered: {lines[0].strip()}")

    def vprintf(self, fmt, args, L, mask):
        lanes_all = self._lanes(L)
        act = np.ones(len(lanes_all), bool) if mask is True else np.broadcast_to(np.asarray(mask, bool),
                                                                                 (len(lanes_all),))
        out = np.zeros(len(lanes_all), np.int32)
        cache: dict = {}
        for k in np.flatnonzero(act):
            lane = int(lanes_all[k])
            f_addr = int(self._lane_value(fmt, k))
            a_addr = int(self._lane_value(args, k))
            if f_addr not in cache:
                cache[f_addr] = parse_format(self._cstring(f_addr))
            pieces = cache[f_addr]
            text, nargs = self._format(pieces, a_addr, lane)
            self.sink(text)
            out[k] = nargs
        return out

    def _read_arg(self, addr: int, lane: int, size: int, off: int) -> bytes:
        win = addr >> WINDOW_SHIFT
        if win == WIN_LOCAL:
            base = lane * self.LS + (addr - LOCAL_WINDOW) + off
            if (addr - LOCAL_WINDOW) + off + size > self.LS:
                raise EmuError(CUDA_ERROR_ILLEGAL_ADDRESS, "printf argument buffer beyond local memory")
            return self.local[base:base + size].tobytes()
        if win == WIN_GLOBAL:
            return self.mem.read(addr + off, size)
        raise EmuError(CUDA_ERROR_ILLEGAL_ADDRESS, f"printf argument buffer at {addr:#x} is not readable")

    def _format(self, pieces, a_addr: int, lane: int) -> tuple[str, int]:
        out = []
        off = 0
        nargs = 0
        for piece in pieces:
            if isinstance(piece, str):
                out.append(piece)
                continue
            spec, conv, size = piece
            off = -(-off // size) * size
            raw = self._read_arg(a_addr, lane, size, off) if a_addr else bytes(size)
            off += size
            nargs += 1
            if conv in "diouxXc":
                v = int.from_bytes(raw, "little", signed=conv in "di")
                if conv in "ouxX" and size == 4:
                    v &= 0xFFFFFFFF
                if conv == "c":
                    out.append((spec.replace("c", "s")) % chr(v & 0xFF) if "%" in spec else chr(v & 0xFF))
                    continue
                if conv == "u":
                    out.append(spec.replace("u", "d") % v)
                else:
                    out.append(spec % v)
            elif conv in "eEfFgGaA":
                v = struct.unpack("<d", raw)[0]
                if conv in "aA":
                    out.append(float.hex(v))
                else:
                    out.append(spec % v)
            elif conv == "s":
                out.append(spec % self._cstring(int.from_bytes(raw, "little")))
            elif conv == "p":
                out.append(f"0x{int.from_bytes(raw, 'little'):x}")
        return "".join(out), nargs


_FMT = re.compile(r"%([-+ #0]*)(\*|\d+)?(?:\.(\*|\d+))?(hh|h|ll|l|L|z|j|t)?([diouxXeEfFgGaAcsp%])")


def parse_format(fmt: str) -> list:
    """Split a printf format into literal text and (python spec, conversion, argument size) items."""
    out: list = []
    pos = 0
    for m in _FMT.finditer(fmt):
        if m.start() > pos:
            out.append(fmt[pos:m.start()])
        flags, width, prec, length, conv = m.groups()
        pos = m.end()
        if conv == "%":
            out.append("%")
            continue
        if width == "*" or prec == "*":
            raise EmuError(CUDA_ERROR_NOT_SUPPORTED, "printf with '*' width or precision")
        spec = "%" + (flags or "") + (width or "") + (f".{prec}" if prec is not None else "")
        if conv in "diouxXc":
            size = 8 if length in ("l", "ll", "z", "j", "t", "L") else 4
        elif conv in "eEfFgGaA":
            size = 8
        else:
            size = 8
        out.append((spec + conv, conv, size))
    if pos < len(fmt):
        out.append(fmt[pos:])
    return out


