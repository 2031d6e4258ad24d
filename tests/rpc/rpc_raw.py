"""Calls and replies written and read by hand on a plain socket (AUTH_NONE), for tests that
control exactly which bytes reach the server and when."""
from __future__ import annotations

import socket
import struct

_CALL = struct.Struct(">10I")     # xid, CALL, rpcvers 2, prog, vers, proc, AUTH_NONE cred and verf


def call_record(prog: int, vers: int, xid: int, proc: int, args: bytes = b"") -> bytes:
    """A whole call record (one last fragment) with its record mark."""
    body = _CALL.pack(xid, 0, 2, prog, vers, proc, 0, 0, 0, 0) + args
    return (0x80000000 | len(body)).to_bytes(4, "big") + body


def read_reply(sock: socket.socket) -> tuple[int, int, bytes]:
    """(xid, accept_stat, results) of the next reply, an accepted one with AUTH_NONE."""
    def exact(n: int) -> bytes:
        buf = bytearray(n)
        view, got = memoryview(buf), 0
        while got < n:
            k = sock.recv_into(view[got:])
            assert k, "the server closed the connection"
            got += k
        return bytes(buf)
    record = exact(int.from_bytes(exact(4), "big") & 0x7FFFFFFF)
    xid, mtype, reply_stat, verf_flavor, verf_len, stat = struct.unpack_from(">6I", record)
    assert (mtype, reply_stat, verf_flavor, verf_len) == (1, 0, 0, 0)
    return xid, stat, record[24:]
