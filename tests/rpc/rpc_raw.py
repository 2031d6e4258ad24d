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


def _exact(sock: socket.socket, n: int) -> bytes | None:
    buf = bytearray(n)
    view, got = memoryview(buf), 0
    while got < n:
        k = sock.recv_into(view[got:])
        if not k:
            return None
        got += k
    return bytes(buf)


def read_record(sock: socket.socket) -> bytes | None:
    """The next record (one last fragment, its mark taken off), or None when the server closed
    the connection."""
    head = _exact(sock, 4)
    return None if head is None else _exact(sock, int.from_bytes(head, "big") & 0x7FFFFFFF)


def read_reply(sock: socket.socket) -> tuple[int, int, bytes]:
    """(xid, accept_stat, results) of the next reply, an accepted one with AUTH_NONE."""
    record = read_record(sock)
    assert record is not None, "the server closed the connection"
    xid, mtype, reply_stat, verf_flavor, verf_len, stat = struct.unpack_from(">6I", record)
    assert (mtype, reply_stat, verf_flavor, verf_len) == (1, 0, 0, 0)
    return xid, stat, record[24:]
