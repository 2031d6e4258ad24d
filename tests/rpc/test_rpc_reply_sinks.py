"""Reply sinks (cricket.rpc.sink.ReplySink, Client.result_into): a reply's result received straight
into the caller's buffer, through a real server on a Unix socket; a reply of another shape, or one
another call's thread already read, comes back as result bytes."""
from __future__ import annotations

import os
import struct
import threading

import pytest

from cricket.rpc import Client, ReplySink, Server, ServerThread
from rpc_calc import Procedure

PROG, VERS = 0x20000179, 1
SIZE = 4 << 20


class Store:
    """READ(offset, size) answers ``size`` bytes of ``buf`` as an opaque; FAIL() answers 7."""

    PROGRAM, VERSION = PROG, VERS

    def __init__(self) -> None:
        self.buf = os.urandom(SIZE)
        self.procedures = {
            1: Procedure(1, "READ", lambda u: (u.unpack_uint(), u.unpack_uint()),
                         lambda p, v: p.pack_opaque(v)),
        }

    def READ(self, offset: int, size: int) -> bytes:
        return self.buf[offset:offset + size]


@pytest.fixture
def served(tmp_path):
    store = Store()
    with ServerThread(Server([store]), str(tmp_path / "store.sock")) as st, \
            Client(st.address, timeout=30) as client:
        yield store, client


def _read(client: Client, offset: int, size: int):
    return client.start(PROG, VERS, 1, [struct.pack(">II", offset, size)])


def _sink(size: int, dst: bytearray) -> ReplySink:
    return ReplySink(struct.pack(">I", size), memoryview(dst))


@pytest.mark.parametrize("size", [1 << 20, (1 << 20) + 3, 5])
def test_a_reply_of_the_sinks_shape_lands_in_its_view(served, size):
    store, client = served
    dst = bytearray(size)
    assert _read(client, 64, size).result_into(_sink(size, dst)) is None
    assert dst == store.buf[64:64 + size]
    assert bytes(_read(client, 0, 8).result()) == struct.pack(">I", 8) + store.buf[:8]   # still in step


def test_a_reply_of_another_shape_comes_back_as_result_bytes(served):
    store, client = served
    dst = bytearray(1 << 20)
    result = _read(client, 0, 1000).result_into(_sink(len(dst), dst))
    assert bytes(result) == struct.pack(">I", 1000) + store.buf[:1000]
    assert not any(dst)


def test_replies_to_other_calls_that_come_first_are_handed_over(served):
    store, client = served
    first = _read(client, 0, 100)
    big = _read(client, 4096, 2 << 20)
    dst = bytearray(2 << 20)
    assert big.result_into(_sink(len(dst), dst)) is None
    assert dst == store.buf[4096:4096 + len(dst)]
    assert bytes(first.result())[4:] == store.buf[:100]


def test_sinks_from_several_threads_each_get_their_own_bytes(served):
    store, client = served
    errors: list[BaseException] = []

    def reader(i: int) -> None:
        try:
            for _ in range(5):
                size = (1 << 20) + i
                dst = bytearray(size)
                got = _read(client, i, size).result_into(_sink(size, dst))
                data = dst if got is None else bytes(got)[4:4 + size]
                assert data == store.buf[i:i + size]
                assert bytes(_read(client, 0, 4).result())[4:] == store.buf[:4]
        except BaseException as exc:        # reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=reader, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors and not any(t.is_alive() for t in threads)
