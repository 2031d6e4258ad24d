"""Python side of ``interop/interop.x``, written by hand to the stub/skeleton contract: the same
procedures as the C interop server (``interop/server_impl.c``), and a stub to call either server."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from cricket.rpc import NO_REPLY, AuthError, AuthStat, current_call
from cricket.xdr import Packer, Unpacker, XdrError

PROG = 536871321
VERS = 1
MAXNAME = 64
MAXPOINTS = 10
CIRCLE, RECT, DOT = 1, 2, 3

# What interop/client_main.c prints against a correct server (its WHOAMI line depends on the auth).
EXPECTED_C_OUTPUT = [
    "NULL ok",
    "ADD 42",
    "SUMMARIZE 3 9 12 75 hello, world -2469135780246 2.500 1 dcba",
    "SUMMARIZE 3 9 12 42 hello, world -2469135780246 2.500 0 dcba",
    "SUMMARIZE 3 9 12 -1 hello, world -2469135780246 2.500 1 dcba",
    "SQUARES 1 4 9 1600000000 0",
    "COUNT 5",
]


def wrap32(v: int) -> int:
    return (v + 2**31) % 2**32 - 2**31


def wrap64(v: int) -> int:
    return (v + 2**63) % 2**64 - 2**63


@dataclass
class Record:
    name: str
    pts: list[tuple[int, int]]
    shape: tuple[int, Any]          # (kind, radius | (x, y) | None)
    big: int
    d: float
    flag: bool
    tag: bytes


@dataclass
class Summary:
    npoints: int
    sum_x: int
    sum_y: int
    area: int
    name: str
    big2: int
    d2: float
    flag: bool
    tag: bytes


def pack_record(p: Packer, r: Record) -> None:
    p.pack_string(r.name, MAXNAME)
    if len(r.pts) > MAXPOINTS:
        raise XdrError("too many points")
    p.pack_uint(len(r.pts))
    for x, y in r.pts:
        p.pack_int(x)
        p.pack_int(y)
    kind, arm = r.shape
    p.pack_enum(kind)
    if kind == CIRCLE:
        p.pack_int(arm)
    elif kind == RECT:
        p.pack_int(arm[0])
        p.pack_int(arm[1])
    p.pack_hyper(r.big)
    p.pack_double(r.d)
    p.pack_bool(r.flag)
    p.pack_fopaque(4, r.tag)


def unpack_record(u: Unpacker) -> Record:
    name = u.unpack_string(MAXNAME)
    n = u.unpack_array_length(MAXPOINTS, 8)
    pts = [(u.unpack_int(), u.unpack_int()) for _ in range(n)]
    kind = u.unpack_enum()
    if kind == CIRCLE:
        arm: Any = u.unpack_int()
    elif kind == RECT:
        arm = (u.unpack_int(), u.unpack_int())
    else:
        arm = None
    return Record(name, pts, (kind, arm), u.unpack_hyper(), u.unpack_double(), u.unpack_bool(),
                  u.unpack_fopaque(4))


def pack_summary(p: Packer, s: Summary) -> None:
    for v in (s.npoints, s.sum_x, s.sum_y, s.area):
        p.pack_int(v)
    p.pack_string(s.name, MAXNAME)
    p.pack_hyper(s.big2)
    p.pack_double(s.d2)
    p.pack_bool(s.flag)
    p.pack_fopaque(4, s.tag)


def unpack_summary(u: Unpacker) -> Summary:
    return Summary(u.unpack_int(), u.unpack_int(), u.unpack_int(), u.unpack_int(),
                   u.unpack_string(MAXNAME), u.unpack_hyper(), u.unpack_double(), u.unpack_bool(),
                   u.unpack_fopaque(4))


def pack_intlist(p: Packer, v: list[int]) -> None:
    if len(v) > 100:
        raise XdrError("intlist holds at most 100 ints")
    p.pack_uint(len(v))
    for x in v:
        p.pack_int(x)


def unpack_intlist(u: Unpacker) -> list[int]:
    return [u.unpack_int() for _ in range(u.unpack_array_length(100, 4))]


@dataclass(frozen=True)
class Procedure:
    number: int
    name: str
    decode_args: Callable[[Unpacker], tuple]
    encode_result: Callable[[Packer, Any], None]


def _none(p, v):
    pass


PROCEDURES = {p.number: p for p in [
    Procedure(1, "ADD", lambda u: (u.unpack_int(), u.unpack_int()), lambda p, v: p.pack_int(v)),
    Procedure(2, "SUMMARIZE", lambda u: (unpack_record(u),), pack_summary),
    Procedure(3, "SQUARES", lambda u: (unpack_intlist(u),), pack_intlist),
    Procedure(4, "LOG", lambda u: (u.unpack_string(),), _none),
    Procedure(5, "COUNT", lambda u: (), lambda p, v: p.pack_int(v)),
    Procedure(6, "WHOAMI", lambda u: (), lambda p, v: p.pack_string(v)),
    Procedure(7, "FAIL", lambda u: (u.unpack_int(),), _none),
]}


class InteropServer:
    """The Python implementation of INTEROP_PROG v1, same answers as the C server."""

    PROGRAM = PROG
    VERSION = VERS
    procedures = PROCEDURES

    def __init__(self) -> None:
        self.logs: dict[int, int] = {}

    def ADD(self, a: int, b: int) -> int:
        return wrap32(a + b)

    def SUMMARIZE(self, r: Record) -> Summary:
        kind, arm = r.shape
        area = 3 * arm * arm if kind == CIRCLE else arm[0] * arm[1] if kind == RECT else -1
        return Summary(len(r.pts), wrap32(sum(x for x, _ in r.pts)), wrap32(sum(y for _, y in r.pts)),
                       wrap32(area), ("hello, " + r.name)[:MAXNAME], wrap64(r.big * 2), r.d * 2,
                       not r.flag, r.tag[::-1])

    def SQUARES(self, v: list[int]) -> list[int]:
        return [wrap32(x * x) for x in v]

    def LOG(self, text: str):
        cid = current_call().connection_id
        self.logs[cid] = self.logs.get(cid, 0) + 1
        return NO_REPLY

    def COUNT(self) -> int:
        return self.logs.get(current_call().connection_id, 0)

    def WHOAMI(self) -> str:
        ctx = current_call()
        c = ctx.credentials
        if ctx.cred_flavor == 1:
            return f"flavor=1 uid={c.uid} gid={c.gid} machine={c.machinename} ngids={len(c.gids)}"
        return f"flavor={ctx.cred_flavor}"

    def FAIL(self, how: int):
        if how == 1:
            raise RuntimeError("FAIL(1) asks for SYSTEM_ERR")
        if how == 2:
            raise AuthError(AuthStat.AUTH_TOOWEAK)
        if how == 3:
            raise AuthError(AuthStat.AUTH_TIMEEXPIRE)
        return None


class InteropClient:
    """Stub for INTEROP_PROG v1 over a :class:`cricket.rpc.Client`."""

    def __init__(self, rpc) -> None:
        self._rpc = rpc

    def _call(self, proc: int, pack: Callable[[Packer], None] | None = None):
        p = Packer()
        if pack is not None:
            pack(p)
        return Unpacker(self._rpc.call(PROG, VERS, proc, p.get_buffers()))

    def ADD(self, a: int, b: int) -> int:
        return self._call(1, lambda p: (p.pack_int(a), p.pack_int(b))).unpack_int()

    def SUMMARIZE(self, r: Record) -> Summary:
        return unpack_summary(self._call(2, lambda p: pack_record(p, r)))

    def SQUARES(self, v: list[int]) -> list[int]:
        return unpack_intlist(self._call(3, lambda p: pack_intlist(p, v)))

    def LOG(self, text: str) -> None:
        p = Packer()
        p.pack_string(text)
        self._rpc.call_batched(PROG, VERS, 4, p.get_buffers())

    def COUNT(self) -> int:
        return self._call(5).unpack_int()

    def WHOAMI(self) -> str:
        return self._call(6).unpack_string()

    def FAIL(self, how: int) -> None:
        self._call(7, lambda p: p.pack_int(how))
