"""Python side of ``echo.x``: the same procedures as ``echo_server.c``, on cricket.rpc, and the
client calls. Written to the stub/skeleton contract by hand, as tests/rpc/rpc_interop.py is."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from cricket.xdr import Packer, Unpacker

PROG = 536871425
VERS = 1
ECHO, SINK = 1, 2


@dataclass(frozen=True)
class Procedure:
    number: int
    name: str
    decode_args: Callable[[Unpacker], tuple]
    encode_result: Callable[[Packer, Any], None]


class EchoServer:
    """ECHO hands the received bytes back as a view (no copy); SINK answers their length."""

    PROGRAM = PROG
    VERSION = VERS
    procedures = {
        ECHO: Procedure(ECHO, "ECHO", lambda u: (u.unpack_opaque_view(),), lambda p, v: p.pack_opaque(v)),
        SINK: Procedure(SINK, "SINK", lambda u: (u.unpack_opaque_view(),), lambda p, v: p.pack_int(v)),
    }

    def ECHO(self, data: memoryview) -> memoryview:
        return data

    def SINK(self, data: memoryview) -> int:
        return len(data)


def echo(rpc, payload) -> memoryview:
    """One ECHO call on a blocking :class:`cricket.rpc.Client`; returns the echoed bytes."""
    p = Packer()
    p.pack_opaque(payload)
    return Unpacker(rpc.call(PROG, VERS, ECHO, p.get_buffers())).unpack_opaque_view()
