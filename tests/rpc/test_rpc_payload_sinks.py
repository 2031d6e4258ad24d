"""Payload sinks: a call's large opaque received straight into the memory a hook names
(cricket.rpc.sink), on uvloop and on asyncio, through a real server on a Unix socket. Whatever
the hook refuses, or a record of another shape, takes the ordinary path (decode, check, handle)."""
from __future__ import annotations

import os
import socket
import struct
import time
import pytest

from cricket.rpc import PayloadSink, Server, ServerThread, current_call
from cricket.rpc.sink import SINK_MIN
from rpc_calc import Procedure
from rpc_raw import call_record, read_reply

PROG, VERS = 0x20000178, 1
SIZE = 4 << 20
REFUSE = 0xFFFFFFFF          # an offset the hook leaves to the ordinary path
FAIL = 0xFFFFFFFE            # an offset at which the hook raises


class Store:
    """PUT(offset, opaque) writes into ``buf`` and answers the byte count; READ(offset, size)
    answers bytes of ``buf``. Counts which path each PUT took."""

    PROGRAM, VERSION = PROG, VERS

    def __init__(self) -> None:
        self.buf = bytearray(SIZE)
        self.ordinary = 0
        self.sunk = 0
        self.hook_xids: list[int] = []
        self.procedures = {
            1: Procedure(1, "PUT", lambda u: (u.unpack_uint(), u.unpack_opaque(SIZE)),
                         lambda p, v: p.pack_uint(v)),
            2: Procedure(2, "READ", lambda u: (u.unpack_uint(), u.unpack_uint()),
                         lambda p, v: p.pack_opaque(v)),
        }

    def PUT(self, offset: int, data: bytes) -> int:
        self.ordinary += 1
        self.buf[offset:offset + len(data)] = data
        return len(data)

    def READ(self, offset: int, size: int) -> bytes:
        return bytes(self.buf[offset:offset + size])

    def sink(self, fixed: bytes, size: int) -> PayloadSink | None:
        (offset,) = struct.unpack(">I", fixed)
        self.hook_xids.append(current_call().xid)
        if offset == FAIL:
            raise RuntimeError("this hook fails on purpose")
        if offset == REFUSE or offset + size > SIZE:
            return None

        def complete() -> int:
            self.sunk += 1
            return size
        return PayloadSink(memoryview(self.buf)[offset:offset + size], complete)


def _xdr_opaque(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data + b"\0" * (-len(data) & 3)


def _record(xid: int, proc: int, args: bytes = b"") -> bytes:
    return call_record(PROG, VERS, xid, proc, args)


def _put(xid: int, offset: int, data: bytes) -> bytes:
    return _record(xid, 1, struct.pack(">I", offset) + _xdr_opaque(data))


_read_reply = read_reply


@pytest.fixture
def served(loop_factory, tmp_path):
    store = Store()
    server = Server([store])
    server.add_payload_sink(PROG, VERS, 1, 4, store.sink)
    with ServerThread(server, str(tmp_path / "store.sock"), loop_factory=loop_factory) as st:
        socks = []

        def connect() -> socket.socket:
            sock = socket.socket(socket.AF_UNIX)
            sock.settimeout(30)
            sock.connect(st.address)
            socks.append(sock)
            return sock
        yield store, connect
        for sock in socks:
            sock.close()


def test_a_large_opaque_lands_in_the_sink_without_the_handler(served):
    store, connect = served
    sock = connect()
    data = os.urandom(1 << 20)
    sock.sendall(_put(7, 4096, data))
    assert _read_reply(sock) == (7, 0, struct.pack(">I", len(data)))
    assert store.buf[4096:4096 + len(data)] == data
    assert (store.sunk, store.ordinary) == (1, 0)
    assert store.hook_xids == [7]          # the hook saw its call through current_call()


def test_bytes_that_arrive_in_small_pieces_land_whole(served):
    store, connect = served
    sock = connect()
    data = os.urandom(SINK_MIN + 10_001)   # not a multiple of 4: the XDR padding follows
    record = _put(1, 0, data)
    sock.sendall(record[:200])
    time.sleep(0.05)
    for i in range(200, len(record), 7000):
        sock.sendall(record[i:i + 7000])
    assert _read_reply(sock) == (1, 0, struct.pack(">I", len(data)))
    assert store.buf[:len(data)] == data and store.sunk == 1


def test_pipelined_copies_and_a_call_behind_them_are_answered_in_order(served):
    store, connect = served
    sock = connect()
    a, b = os.urandom(2 << 20), os.urandom(1 << 20)
    sock.sendall(_put(1, 0, a) + _put(2, len(a), b) + _record(3, 2, struct.pack(">II", len(a) - 8, 16)))
    assert _read_reply(sock)[:2] == (1, 0)
    assert _read_reply(sock)[:2] == (2, 0)
    xid, stat, body = _read_reply(sock)
    assert (xid, stat) == (3, 0) and body[4:20] == a[-8:] + b[:8]
    assert store.sunk == 2


def test_what_the_hook_refuses_or_fails_takes_the_ordinary_path(served, caplog):
    store, connect = served
    sock = connect()
    data = os.urandom(SINK_MIN * 2)
    sock.sendall(_put(1, REFUSE, data))
    # the ordinary handler gets the call and its bytes (and here writes nothing: past the end)
    assert _read_reply(sock) == (1, 0, struct.pack(">I", len(data)))
    sock.sendall(_put(2, FAIL, data))
    assert _read_reply(sock)[:2] == (2, 0)
    assert store.ordinary == 2 and store.sunk == 0
    assert "payload sink of PUT failed" in caplog.text


def test_small_records_are_received_whole(served):
    store, connect = served
    sock = connect()
    sock.sendall(_put(1, 0, b"x" * 1000))
    assert _read_reply(sock) == (1, 0, struct.pack(">I", 1000))
    assert store.ordinary == 1 and store.sunk == 0 and store.hook_xids == []


def test_an_opaque_longer_than_its_record_is_garbage_and_the_server_serves_on(served):
    store, connect = served
    sock = connect()
    body = struct.pack(">I", 0) + struct.pack(">I", SINK_MIN * 4) + b"\1" * (SINK_MIN * 2)
    sock.sendall(_record(1, 1, body))
    assert _read_reply(sock)[:2] == (1, 4)          # GARBAGE_ARGS from the ordinary decoder
    assert store.hook_xids == [] and store.buf[:8] == bytes(8)
    sock.sendall(_put(2, 0, b"\2" * SINK_MIN))
    assert _read_reply(sock)[:2] == (2, 0) and store.buf[:SINK_MIN] == b"\2" * SINK_MIN


def test_a_client_that_leaves_mid_copy_harms_no_one_else(served):
    store, connect = served
    quitter = connect()
    record = _put(1, 0, b"\3" * (1 << 20))
    quitter.sendall(record[:len(record) // 2])
    time.sleep(0.1)
    quitter.close()
    other = connect()
    data = os.urandom(1 << 20)
    other.sendall(_put(5, 0, data) + _record(6, 2, struct.pack(">II", 0, 8)))
    assert _read_reply(other)[:2] == (5, 0)
    assert _read_reply(other) == (6, 0, struct.pack(">I", 8) + data[:8])


def test_a_sink_for_an_unserved_procedure_is_refused():
    store = Store()
    server = Server([store])
    with pytest.raises(Exception, match="not served"):
        server.add_payload_sink(PROG, VERS, 9, 4, store.sink)
    with pytest.raises(ValueError, match="multiple of 4"):
        server.add_payload_sink(PROG, VERS, 1, 3, store.sink)


def test_a_sink_of_the_wrong_size_or_kind_is_not_used(tmp_path, caplog):
    store = Store()
    bad = {"short": lambda fixed, size: PayloadSink(memoryview(store.buf)[:size - 1], lambda: size),
           "readonly": lambda fixed, size: PayloadSink(memoryview(bytes(size)), lambda: size),
           "words": lambda fixed, size: PayloadSink(memoryview(bytearray(size)).cast("I"), lambda: size)}
    for name, hook in bad.items():
        server = Server([store])
        server.add_payload_sink(PROG, VERS, 1, 4, hook)
        with ServerThread(server, str(tmp_path / f"{name}.sock")) as st:
            sock = socket.socket(socket.AF_UNIX)
            sock.settimeout(30)
            sock.connect(st.address)
            data = os.urandom(SINK_MIN)
            sock.sendall(_put(1, 0, data))
            assert _read_reply(sock) == (1, 0, struct.pack(">I", len(data)))
            assert store.buf[:len(data)] == data          # the ordinary handler wrote it
            sock.close()
    assert store.ordinary == 3 and store.sunk == 0
    assert caplog.text.count("not a writable byte view") == 3
