"""Replies that borrow memory: a handler may return a view of a buffer it changes later. The server
sends such a reply uncopied and runs none of the connection's next calls until the transport has
sent it, on uvloop (which keeps a reference to what it is given) and on asyncio alike."""
from __future__ import annotations

import socket
import struct
import time
import pytest

from cricket.rpc import Server, ServerThread
from rpc_calc import Procedure
from rpc_raw import call_record, read_reply

PROG, VERS = 0x20000177, 1
SIZE = 4 << 20


class Memory:
    """READ returns a view of its buffer (borrowed); FILL overwrites the buffer; COPY returns bytes."""

    PROGRAM, VERSION = PROG, VERS

    def __init__(self) -> None:
        self.buf = bytearray(bytes(range(256)) * (SIZE // 256))
        self.procedures = {
            1: Procedure(1, "READ", lambda u: (), lambda p, v: p.pack_opaque(v)),
            2: Procedure(2, "FILL", lambda u: (u.unpack_uint(),), lambda p, v: None),
            3: Procedure(3, "COPY", lambda u: (), lambda p, v: p.pack_opaque(v)),
        }

    def READ(self) -> memoryview:
        return memoryview(self.buf)

    def FILL(self, value: int) -> None:
        self.buf[:] = bytes([value]) * SIZE

    def COPY(self) -> bytes:
        return bytes(self.buf)


def _record(xid: int, proc: int, args: bytes = b"") -> bytes:
    return call_record(PROG, VERS, xid, proc, args)


def _read_reply(sock: socket.socket) -> tuple[int, bytes]:
    xid, stat, results = read_reply(sock)
    assert stat == 0
    return xid, results


@pytest.fixture
def served(loop_factory, tmp_path):
    memory = Memory()
    with ServerThread(Server([memory]), str(tmp_path / "mem.sock"), loop_factory=loop_factory) as st:
        sock = socket.socket(socket.AF_UNIX)
        sock.settimeout(30)
        sock.connect(st.address)
        yield memory, sock
        sock.close()


def test_call_after_a_borrowed_reply_waits_until_it_is_sent(served):
    memory, sock = served
    original = bytes(memory.buf)
    sock.sendall(_record(1, 1) + _record(2, 2, struct.pack(">I", 0xEE)) + _record(3, 1))
    time.sleep(0.3)               # the server holds all three calls; the first reply is mostly unsent
    xid, first = _read_reply(sock)
    assert xid == 1 and first[:4] == SIZE.to_bytes(4, "big")
    assert first[4:] == original, "FILL ran while the reply that borrowed the buffer was being sent"
    assert _read_reply(sock)[0] == 2
    xid, third = _read_reply(sock)
    assert xid == 3 and third[4:] == b"\xEE" * SIZE


def test_replies_of_copies_do_not_hold_the_connection(served):
    memory, sock = served
    sock.sendall(_record(1, 3) + _record(2, 2, struct.pack(">I", 7)))
    time.sleep(0.3)
    assert memory.buf[:4] == b"\7\7\7\7"   # FILL ran although the COPY reply was still unsent
    assert _read_reply(sock)[1][4:12] == bytes(range(8))
    assert _read_reply(sock)[0] == 2


def test_a_held_connection_reads_on_once_the_reply_is_read(served):
    memory, sock = served
    for round_ in range(3):
        sock.sendall(_record(10 + round_, 1) + _record(20 + round_, 2, struct.pack(">I", round_)))
        xid, data = _read_reply(sock)
        assert xid == 10 + round_ and len(data) == SIZE + 4
        assert _read_reply(sock)[0] == 20 + round_
    assert memory.buf[:2] == b"\2\2"
