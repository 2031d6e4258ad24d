"""Malformed and hostile input against a server process: each bad connection gets the right reply
or a clean close, and a second client, connected the whole time, keeps getting correct answers."""
from __future__ import annotations

import socket
import struct

import pytest

from cricket.rpc import Client
from cricket.rpc.record import mark
from rpc_calc import CALC_PROG, CalcClient

W = struct.Struct(">I")


def words(*ws: int) -> bytes:
    return struct.pack(f">{len(ws)}I", *ws)


NONE_AUTH = words(0, 0, 0, 0)


def call(xid: int, prog: int = CALC_PROG, vers: int = 1, proc: int = 0, auth: bytes = NONE_AUTH,
         args: bytes = b"", rpcvers: int = 2) -> bytes:
    return words(xid, 0, rpcvers, prog, vers, proc) + auth + args


class Raw:
    def __init__(self, address) -> None:
        self.sock = socket.create_connection(address, timeout=5)

    def send(self, *records: bytes) -> None:
        self.sock.sendall(b"".join(mark(len(r)) + r for r in records))

    def _exact(self, n: int) -> bytes | None:
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                return None
            buf += chunk
        return buf

    def reply(self) -> bytes | None:
        """The next reply record, or None when the server closed the connection."""
        head = self._exact(4)
        if head is None:
            return None
        n = W.unpack(head)[0]
        assert n & 0x80000000, "server replies are single fragments"
        return self._exact(n & 0x7FFFFFFF)

    def close(self) -> None:
        self.sock.close()


@pytest.fixture(scope="module")
def witness(calc_process):
    with Client(calc_process.address, timeout=10) as rpc:
        yield CalcClient(rpc)


@pytest.fixture
def raw(calc_process, witness):
    conn = Raw(calc_process.address)
    yield conn
    conn.close()
    for i in range(3):                       # the connection that stayed up is still served
        assert witness.ADD(i, 100) == i + 100


def test_truncated_header_closes_only_that_connection(raw):
    raw.send(words(1, 0, 2))
    assert raw.reply() is None


def test_reply_message_sent_to_server_closes_connection(raw):
    raw.send(words(5, 1, 0, 0, 0, 0))
    assert raw.reply() is None


def test_wrong_rpc_version_gets_rpc_mismatch_and_connection_stays(raw):
    raw.send(call(7, rpcvers=3))
    assert raw.reply() == words(7, 1, 1, 0, 2, 2)
    raw.send(call(8))
    assert raw.reply() == words(8, 1, 0, 0, 0, 0)


def test_unknown_program_version_procedure(raw):
    raw.send(call(1, prog=CALC_PROG + 5), call(2, vers=3), call(3, proc=77), call(4, proc=8))
    assert raw.reply() == words(1, 1, 0, 0, 0, 1)
    assert raw.reply() == words(2, 1, 0, 0, 0, 2, 1, 2)
    assert raw.reply() == words(3, 1, 0, 0, 0, 3)
    assert raw.reply() == words(4, 1, 0, 0, 0, 3)


def test_garbage_arguments(raw):
    raw.send(call(1, proc=1, args=words(5)),                  # ADD with one int
             call(2, proc=2, args=words(0x40000000) + b"ab"),  # ECHO announcing 1 GiB
             call(3, proc=3, args=words(300) + b"x" * 300),    # LOG over string<255>
             call(4, proc=1, args=words(5, 6, 7, 8)))          # trailing bytes are ignored
    assert raw.reply() == words(1, 1, 0, 0, 0, 4)
    assert raw.reply() == words(2, 1, 0, 0, 0, 4)
    assert raw.reply() == words(3, 1, 0, 0, 0, 4)
    assert raw.reply() == words(4, 1, 0, 0, 0, 0, 11)


def test_bad_credentials(raw):
    over_long = words(1, 404) + b"\0" * 404 + words(0, 0)
    long_name = words(1, 8 + 300 + 12) + words(0, 300) + b"n" * 300 + words(0, 0, 0) + words(0, 0)
    many_groups = words(1, 8 + 12 + 17 * 4) + words(0, 0, 0, 0, 17) + b"\0" * 68 + words(0, 0)
    raw.send(call(1, auth=over_long), call(2, auth=long_name), call(3, auth=many_groups),
             call(4, auth=words(99, 0, 0, 0)), call(5, auth=words(2, 4, 1, 0, 0)))
    assert raw.reply() == words(1, 1, 1, 1, 1)     # AUTH_ERROR / AUTH_BADCRED
    assert raw.reply() == words(2, 1, 1, 1, 1)
    assert raw.reply() == words(3, 1, 1, 1, 1)
    assert raw.reply() == words(4, 1, 1, 1, 2)     # unknown flavor: AUTH_REJECTEDCRED
    assert raw.reply() == words(5, 1, 1, 1, 2)     # AUTH_SHORT, as libtirpc answers


def test_record_over_the_maximum_is_refused_before_its_body(raw):
    raw.sock.sendall(mark(2 * 1024 * 1024))       # announce 2 MiB, send nothing more
    assert raw.reply() is None


def test_fragments_over_the_maximum_in_total_are_refused(raw):
    raw.sock.sendall(mark(600_000, last=False) + b"\0" * 600_000 + mark(600_000, last=False))
    assert raw.reply() is None


def test_client_disconnecting_mid_record(calc_process, witness):
    for cut in (2, 4, 30):
        conn = Raw(calc_process.address)
        conn.sock.sendall((mark(100) + call(1, proc=1, args=words(1, 2)) + b"\0" * 100)[:cut])
        conn.close()
        assert witness.ADD(cut, 1) == cut + 1


def test_call_in_tiny_fragments_and_tiny_writes(raw):
    rec = call(42, proc=1, args=words(40, 2))
    wire = b"".join(mark(len(rec[i:i + 16]), last=i + 16 >= len(rec)) + rec[i:i + 16]
                    for i in range(0, len(rec), 16))
    for i in range(len(wire)):
        raw.sock.sendall(wire[i:i + 1])
    assert raw.reply() == words(42, 1, 0, 0, 0, 0, 42)


def test_good_calls_after_bad_ones_in_one_write_are_answered(raw):
    raw.send(call(1, proc=1, args=words(1)), call(2, proc=1, args=words(2, 3)),
             call(3, rpcvers=9), call(4, proc=1, args=words(4, 5)))
    assert [raw.reply() for _ in range(4)] == [
        words(1, 1, 0, 0, 0, 4), words(2, 1, 0, 0, 0, 0, 5), words(3, 1, 1, 0, 2, 2),
        words(4, 1, 0, 0, 0, 0, 9)]
