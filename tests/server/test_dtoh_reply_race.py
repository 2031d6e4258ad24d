"""A device-to-host reply is sent from a view of the emu arena (no copy); the server runs none of
the connection's next calls until that reply has left, so a write to the same memory that follows
it on the wire never changes the bytes of the reply while the transport still holds them.

The client here speaks raw ONC RPC on a Unix socket: it sends the copy-back call and the calls that
overwrite the same memory in one write, then waits before reading anything, so the server has the
later calls in hand while most of the (multi-MiB) reply is still in its transport.
"""
from __future__ import annotations

import os
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from cricket.protocol import PROGRAM, VERSION, Skeleton
from cricket.protocol import gen as P

REPO = Path(__file__).resolve().parents[2]
PROC = {proc.name: number for number, proc in Skeleton.procedures.items()}
_CALL = struct.Struct(">10I")     # xid, CALL, rpcvers 2, prog, vers, proc, AUTH_NONE cred + verf


class RawClient:
    """Calls as bytes on a socket; replies read back in order (each a whole record)."""

    def __init__(self, path: str) -> None:
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.settimeout(30)
        self.sock.connect(path)
        self.xid = 0x1000

    def record(self, proc: str, args: bytes) -> bytes:
        self.xid += 1
        body = _CALL.pack(self.xid, 0, 2, PROGRAM, VERSION, PROC[proc], 0, 0, 0, 0) + args
        return (0x80000000 | len(body)).to_bytes(4, "big") + body

    def send(self, *records: bytes) -> None:
        self.sock.sendall(b"".join(records))

    def _exact(self, n: int) -> bytes:
        buf = bytearray(n)
        view, got = memoryview(buf), 0
        while got < n:
            k = self.sock.recv_into(view[got:])
            assert k, "the server closed the connection"
            got += k
        return bytes(buf)

    def reply(self) -> bytes:
        mark = int.from_bytes(self._exact(4), "big")
        assert mark & 0x80000000
        record = self._exact(mark & 0x7FFFFFFF)
        assert record[4:24] == b"\0\0\0\1" + b"\0" * 16, "not an accepted SUCCESS reply"
        return record[24:]

    def call(self, proc: str, args: bytes) -> bytes:
        self.send(self.record(proc, args))
        return self.reply()


@pytest.fixture(scope="module")
def unix_emu_server(tmp_path_factory):
    pytest.importorskip("cricket.backends.emu")
    tmp = tmp_path_factory.mktemp("race")
    path, ready = tmp / "cricket.sock", tmp / "ready"
    log = open(tmp / "server.log", "wb")
    proc = subprocess.Popen([sys.executable, "-m", "cricket", "server", "--unix", str(path),
                             "--backend", "emu", "--ready-file", str(ready)],
                            stdout=log, stderr=subprocess.STDOUT, cwd=REPO,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    deadline = time.monotonic() + 60
    while not ready.exists():
        assert proc.poll() is None and time.monotonic() < deadline, \
            (tmp / "server.log").read_text(errors="replace")
        time.sleep(0.02)
    yield str(path)
    proc.terminate()
    proc.wait(10)
    log.close()


@pytest.fixture
def client(unix_emu_server):
    c = RawClient(unix_emu_server)
    res = P.unpack_cr_hello_res(c.call("CR_HELLO", P.pack_cr_hello_args(P.cr_hello_args(
        protocol=P.CRICKET_PROTOCOL, client="race test", token="", backend=""))))
    assert res.status == 0
    yield c
    c.sock.close()


def _alloc(c: RawClient, size: int) -> int:
    res = P.unpack_cr_ptr_res(c.call("CR_MEM_ALLOC", P.pack_cr_size(size)))
    assert res.status == 0
    return res.ptr


def _htod(ptr: int, data: bytes) -> bytes:
    return P.pack_cr_htod_args(P.cr_htod_args(dst=ptr, stream=0, data=data))


def _dtoh(ptr: int, size: int) -> bytes:
    return P.pack_cr_dtoh_args(P.cr_dtoh_args(src=ptr, size=size, stream=0))


# 4 MiB: the copy runs on the session's worker; 256 KiB: answered at once on the event loop.
@pytest.mark.parametrize("size", [4 << 20, 256 << 10], ids=["worker", "event-loop"])
def test_write_after_copy_back_never_reaches_the_reply(client, size):
    ptr = _alloc(client, size)
    old = bytes(range(251)) * (size // 251) + bytes(size % 251)
    assert P.unpack_cr_status_res(client.call("CR_MEMCPY_HTOD", _htod(ptr, old))).status == 0
    new = b"\xEE" * size
    tail = 48 << 10                        # the end of the reply: surely not sent yet
    client.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    client.send(client.record("CR_MEMCPY_DTOH", _dtoh(ptr, size)),
                client.record("CR_MEMCPY_HTOD_ASYNC", _htod(ptr + size - tail, new[:tail])),
                client.record("CR_MEMCPY_HTOD", _htod(ptr, new[:tail])),
                client.record("CR_MEMCPY_DTOH", _dtoh(ptr, size)))
    time.sleep(0.5)                        # the server has read every call; nobody reads replies
    first = P.unpack_cr_data_res(client.reply())
    assert first.status == 0 and len(first.data) == size
    assert first.data == old, "a later write changed the reply of an earlier copy-back"
    assert P.unpack_cr_status_res(client.reply()).status == 0
    second = P.unpack_cr_data_res(client.reply())
    assert second.data == new[:tail] + old[tail:size - tail] + new[:tail]


def test_many_pipelined_copy_backs_of_changing_memory_each_see_their_moment(client):
    """Overwrite, copy-back, overwrite, ... back to back: every reply shows the memory as the calls
    before it left it."""
    size = 1 << 20
    ptr = _alloc(client, size)
    records = []
    for k in range(6):
        records.append(client.record("CR_MEMCPY_HTOD_ASYNC", _htod(ptr, bytes([k]) * size)))
        records.append(client.record("CR_MEMCPY_DTOH", _dtoh(ptr, size)))
    # Sent from another thread while this one reads: the server stops reading while it waits for
    # a reply to leave, and a client that sends more than the socket holds must read meanwhile.
    sender = threading.Thread(target=client.send, args=records)
    sender.start()
    for k in range(6):
        res = P.unpack_cr_data_res(client.reply())
        assert res.status == 0 and res.data == bytes([k]) * size, f"copy-back {k}"
    sender.join(30)
