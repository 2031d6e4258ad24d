"""A small test program written by hand to the rpcgen stub/skeleton contract.

It lets the runtime be tested apart from the generator (the generated path has its own test,
``test_generated_stubs.py``). CALC is served in versions 1 and 2.
"""
from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any, Callable

from cricket.rpc import NO_REPLY, current_call, current_connection_id

CALC_PROG = 0x20000101


@dataclass(frozen=True)
class Procedure:
    number: int
    name: str
    decode_args: Callable[[Any], tuple]
    encode_result: Callable[[Any, Any], None]


def _void_args(u):
    return ()


def _void_result(p, v):
    pass


def _int_result(p, v):
    p.pack_int(v)


def _two_ints(u):
    return u.unpack_int(), u.unpack_int()


def _one_int(u):
    return (u.unpack_int(),)


def _opaque_arg(u):
    return (u.unpack_opaque(),)


def _opaque_result(p, v):
    p.pack_opaque(v)


def _string_arg(u):
    return (u.unpack_string(255),)


def _whoami_result(p, v):
    flavor, uid, gid, name, conn = v
    p.pack_int(flavor)
    p.pack_uint(uid)
    p.pack_uint(gid)
    p.pack_string(name)
    p.pack_uint(conn)


PROCS = [
    Procedure(1, "ADD", _two_ints, _int_result),
    Procedure(2, "ECHO", _opaque_arg, _opaque_result),
    Procedure(3, "LOG", _string_arg, _void_result),
    Procedure(4, "COUNT", _void_args, _int_result),
    Procedure(5, "WHOAMI", _void_args, _whoami_result),
    Procedure(6, "SLEEP", _one_int, _int_result),
    Procedure(7, "FAIL", _void_args, _void_result),
    Procedure(8, "UNIMPL", _void_args, _void_result),
]


class CalcSkeletonV1:
    PROGRAM = CALC_PROG
    VERSION = 1
    procedures = {p.number: p for p in PROCS}

    def ADD(self, a, b):
        raise NotImplementedError

    def ECHO(self, data):
        raise NotImplementedError

    def LOG(self, text):
        raise NotImplementedError

    def COUNT(self):
        raise NotImplementedError

    def WHOAMI(self):
        raise NotImplementedError

    def SLEEP(self, ms):
        raise NotImplementedError

    def FAIL(self):
        raise NotImplementedError

    def UNIMPL(self):
        raise NotImplementedError


class CalcV1(CalcSkeletonV1):
    """The implementation the tests serve: per-connection LOG counters, async SLEEP."""

    def __init__(self) -> None:
        self.logs: dict[int, list[str]] = {}

    def ADD(self, a, b):
        return (a + b + 2**31) % 2**32 - 2**31

    def ECHO(self, data):
        return data

    def LOG(self, text):
        self.logs.setdefault(current_call().connection_id, []).append(text)
        return NO_REPLY

    def COUNT(self):
        return len(self.logs.get(current_connection_id(), []))

    def WHOAMI(self):
        ctx = current_call()
        cred = ctx.credentials
        if cred is None:
            return ctx.cred_flavor, 0, 0, "", ctx.connection_id
        return ctx.cred_flavor, cred.uid, cred.gid, cred.machinename, ctx.connection_id

    async def SLEEP(self, ms):
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, time.sleep, ms / 1000)
        return current_call().xid & 0x7FFFFFFF

    def FAIL(self):
        raise RuntimeError("FAIL was called")


class CalcV2(CalcV1):
    VERSION = 2

    def ADD(self, a, b):
        return super().ADD(a, b) + 1000


class CalcClient:
    """Client stub for CALC, the way rpcgen's stubs drive ``rpc.call``."""

    def __init__(self, rpc, version: int = 1) -> None:
        self._rpc = rpc
        self._vers = version

    def _call(self, proc, bufs=()):
        return self._rpc.call(CALC_PROG, self._vers, proc, bufs)

    @staticmethod
    def _pack(fn, *args) -> list:
        from cricket.xdr import Packer
        p = Packer()
        fn(p, *args)
        return p.get_buffers()

    def ADD(self, a: int, b: int) -> int:
        from cricket.xdr import Unpacker
        res = self._call(1, self._pack(lambda p: (p.pack_int(a), p.pack_int(b))))
        return Unpacker(res).unpack_int()

    def ECHO(self, data: bytes) -> bytes:
        from cricket.xdr import Unpacker
        res = self._call(2, self._pack(lambda p: p.pack_opaque(data)))
        return Unpacker(res).unpack_opaque()

    def LOG(self, text: str) -> None:
        self._rpc.call_batched(CALC_PROG, self._vers, 3, self._pack(lambda p: p.pack_string(text)))

    def COUNT(self) -> int:
        from cricket.xdr import Unpacker
        return Unpacker(self._call(4)).unpack_int()

    def WHOAMI(self) -> tuple:
        from cricket.xdr import Unpacker
        u = Unpacker(self._call(5))
        return (u.unpack_int(), u.unpack_uint(), u.unpack_uint(), u.unpack_string(),
                u.unpack_uint())

    def SLEEP(self, ms: int) -> int:
        from cricket.xdr import Unpacker
        return Unpacker(self._call(6, self._pack(lambda p: p.pack_int(ms)))).unpack_int()
