"""A record's common path in the server, compiled (``cricket._cext.dispatch``) and its pure-Python
twin (``cricket.rpc.dispatch``): two real server processes, one on each, get the same bytes on a
plain socket (good calls, every kind of rejected call, AUTH_SYS, a coroutine handler, records
several to a segment and split across fragments, a record over the limit) and must answer with
the same bytes, which are the answers ONC RPC asks for."""
from __future__ import annotations

import importlib.util
import socket
import struct

import pytest

from cricket.rpc.record import mark
from rpc_calc import CALC_PROG
from rpc_peers import ServerProcess
from rpc_raw import read_record

NONE_AUTH = struct.pack(">4I", 0, 0, 0, 0)


def words(*ws: int) -> bytes:
    return struct.pack(f">{len(ws)}I", *ws)


def call(xid: int, proc: int, args: bytes = b"", *, prog: int = CALC_PROG, vers: int = 1,
         auth: bytes = NONE_AUTH, rpcvers: int = 2) -> bytes:
    return words(xid, 0, rpcvers, prog, vers, proc) + auth + args


def auth_sys(uid: int, gid: int, name: bytes) -> bytes:
    body = words(7, len(name)) + name + b"\0" * (-len(name) & 3) + words(uid, gid, 0)
    return words(1, len(body)) + body + words(0, 0)


CALLS = [
    call(1, 0),                                        # NULL
    call(2, 1, words(2, 3)),                           # ADD 2 + 3
    call(3, 2, words(5) + b"hello\0\0\0"),             # ECHO
    call(4, 5, auth=auth_sys(1000, 100, b"host")),     # WHOAMI: the call context, AUTH_SYS
    call(5, 6, words(1)),                              # SLEEP: a coroutine handler
    call(6, 0, prog=CALC_PROG + 5),                    # PROG_UNAVAIL
    call(7, 0, vers=9),                                # PROG_MISMATCH 1..2
    call(8, 77),                                       # PROC_UNAVAIL
    call(9, 8),                                        # UNIMPL raises NotImplementedError
    call(10, 1, words(5)),                             # ADD with one int: GARBAGE_ARGS
    call(11, 2, words(0x40000000) + b"ab"),            # ECHO announcing 1 GiB: GARBAGE_ARGS
    call(12, 7),                                       # FAIL raises: SYSTEM_ERR
    call(13, 0, rpcvers=3),                            # RPC_MISMATCH
    call(14, 4, auth=words(99, 0, 0, 0)),              # unknown flavor: AUTH_REJECTEDCRED
    call(15, 1, words(2, 3), vers=2),                  # ADD of version 2
]


def _answers(address) -> list:
    """The replies to CALLS sent one at a time, then all in one segment, then one call in three
    fragments; last what a record over the limit gets (None: the connection was closed)."""
    out = []
    with socket.create_connection(address, timeout=10) as sock:
        for record in CALLS:
            sock.sendall(mark(len(record)) + record)
            out.append(read_record(sock))
        sock.sendall(b"".join(mark(len(r)) + r for r in CALLS))
        out += [read_record(sock) for _ in CALLS]
        split = call(20, 1, words(40, 2))
        sock.sendall(mark(10, last=False) + split[:10] + mark(20, last=False) + split[10:30]
                     + mark(len(split) - 30) + split[30:])
        out.append(read_record(sock))
        sock.sendall(mark(2 << 20))
        out.append(read_record(sock))
    return out


def _served_by(implementation: str, monkeypatch) -> list:
    monkeypatch.setenv("CRICKET_PUREPYTHON", "1" if implementation == "twin" else "0")
    server = ServerProcess("rpc_calc:CalcV1", "rpc_calc:CalcV2", extra=("--max-record", "1048576"))
    try:
        return _answers(server.address)
    finally:
        log = server.stop()
        assert "unavailable" not in log, log        # _select fell back to a twin


def test_compiled_and_twin_dispatch_answer_the_same_bytes(monkeypatch):
    if importlib.util.find_spec("cricket._cext.dispatch") is None:
        pytest.skip("cricket._cext.dispatch is not built (make build)")
    compiled = _served_by("compiled", monkeypatch)
    twin = _served_by("twin", monkeypatch)
    assert compiled == twin
    n = len(CALLS)
    assert compiled[:n] == compiled[n:2 * n]       # one at a time or all in one segment
    ok = words(1, 0, 0, 0, 0)
    assert compiled[0] == words(1) + ok
    assert compiled[1] == words(2) + ok + words(5)
    assert compiled[2] == words(3) + ok + words(5) + b"hello\0\0\0"
    assert compiled[3] == words(4) + ok + words(1, 1000, 100, 4) + b"host" + words(1)
    assert compiled[4] == words(5) + ok + words(5)        # SLEEP answers its xid
    assert compiled[5] == words(6, 1, 0, 0, 0, 1)
    assert compiled[6] == words(7, 1, 0, 0, 0, 2, 1, 2)
    assert compiled[7] == words(8, 1, 0, 0, 0, 3)
    assert compiled[8] == words(9, 1, 0, 0, 0, 3)
    assert compiled[9] == words(10, 1, 0, 0, 0, 4)
    assert compiled[10] == words(11, 1, 0, 0, 0, 4)
    assert compiled[11] == words(12, 1, 0, 0, 0, 5)
    assert compiled[12] == words(13, 1, 1, 0, 2, 2)
    assert compiled[13] == words(14, 1, 1, 1, 2)
    assert compiled[14] == words(15) + ok + words(1005)
    assert compiled[-2] == words(20) + ok + words(42)
    assert compiled[-1] is None
