"""Device-to-host copies received straight into the destination (cricket.client.direct), against a
real cricket server (emu backend) on a Unix socket."""
import os
import threading

import pytest

from cricket.client import direct
from cricket.client.api import CudaError, connect
from cricket.client.local_server import LocalServer
from cricket.protocol import MAX_INLINE
from cricket.rpc import rpc_call


@pytest.fixture(scope="module")
def conn():
    # the socket path: shared memory (the default on one host) would carry these copies instead
    with LocalServer(["emu"]) as server, connect(server.address, shared_memory=False) as c:
        yield c


def _fed_bytes(conn, monkeypatch) -> list[int]:
    """Count the bytes that pass through the RPC client's record reassembly: fed to it, or
    received in place into the record it is assembling (``writable()`` then ``advance(n)``)."""
    fed = []
    reader = conn._rpc._reader

    class Spy:
        def __getattr__(self, name):
            return getattr(reader, name)

        def feed(self, data):
            fed.append(memoryview(data).nbytes)
            return reader.feed(data)

        def advance(self, n):
            fed.append(n)
            return reader.advance(n)

    rpc = conn._rpc
    spy = Spy()
    monkeypatch.setattr(rpc, "_reader", spy)
    # The compiled call path reassembles in C, out of the spy's sight: calls take the twin's,
    # reading through the spy, while the test runs.
    monkeypatch.setattr(rpc, "_path", rpc_call.CallPath(
        rpc, rpc._sock, spy, rpc._rbuf.obj, rpc._auth_bytes, rpc._check_verifier is None,
        rpc._spin, rpc._spin_yields))
    return fed


def test_large_copy_back_is_exact_and_skips_the_reassembly_buffer(conn, monkeypatch):
    size = MAX_INLINE * 2 + 100001         # three chunks, the last not a multiple of 4
    data = os.urandom(size)
    buf = conn.to_device(data)
    fed = _fed_bytes(conn, monkeypatch)
    assert conn.memcpy_dtoh(buf, size) == data
    assert sum(fed) < 4096                 # none of the data went through the reader
    buf.free()


def test_small_copy_back_takes_the_ordinary_path(conn):
    data = os.urandom(direct.DIRECT_MIN - 3)
    buf = conn.to_device(data)
    assert conn.memcpy_dtoh(buf, len(data)) == data
    buf.free()


def test_copy_back_from_a_bad_address_raises_and_the_connection_keeps_working(conn):
    with pytest.raises(CudaError):
        conn.memcpy_dtoh(0x10, 1 << 20)
    data = os.urandom(1 << 20)
    buf = conn.to_device(data)
    assert conn.memcpy_dtoh(buf, len(data)) == data
    buf.free()


def test_copies_back_from_several_threads_meet_other_threads_replies(conn):
    sizes = [(1 << 20) + 4 * i + 1 for i in range(4)]
    blobs = [os.urandom(n) for n in sizes]
    bufs = [conn.to_device(b) for b in blobs]
    errors = []

    def copy_back(i):
        try:
            for _ in range(5):
                assert conn.memcpy_dtoh(bufs[i], sizes[i]) == blobs[i]
                conn.mem_get_info()         # a small reply between the large ones
        except BaseException as exc:        # reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=copy_back, args=(i,)) for i in range(len(bufs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors and not any(t.is_alive() for t in threads)
    for b in bufs:
        b.free()


def test_copies_below_the_direct_threshold_take_the_ordinary_path(conn, monkeypatch):
    data = os.urandom(1 << 20)
    buf = conn.to_device(data)
    monkeypatch.setattr(direct, "DIRECT_MIN", len(data) + 1)
    fed = _fed_bytes(conn, monkeypatch)
    assert conn.memcpy_dtoh(buf, len(data)) == data
    assert sum(fed) >= len(data)
    buf.free()


def test_host_to_device_buffers_encode_cr_htod_args_without_copying_the_data():
    from cricket.protocol import gen as P
    for n in (0, 1, 5, 8):
        data = bytearray(range(n))
        buffers = direct.htod_buffers(0x7000, 9, memoryview(data))
        assert b"".join(buffers) == P.pack_cr_htod_args(P.cr_htod_args(dst=0x7000, stream=9, data=bytes(data)))
        if n:
            data[0] = 0xFF                  # the second buffer is the caller's memory itself
            assert buffers[1][0] == 0xFF


def test_large_pipelined_copy_to_the_device_arrives_whole(conn):
    data = os.urandom(MAX_INLINE * 2 + 7)
    buf = conn.alloc(len(data))
    conn.memcpy_htod(buf, data)
    assert conn.memcpy_dtoh(buf, len(data)) == data
    conn.memcpy_htod(buf, data[::-1], sync=False)
    assert conn.memcpy_dtoh(buf, len(data)) == data[::-1]
    buf.free()


def test_take_data_accepts_only_a_successful_reply_of_the_right_size():
    from cricket.protocol import gen as P
    data = os.urandom(10)
    dst = bytearray(10)
    assert direct.take_data(memoryview(P.pack_cr_data_res(P.cr_data_res(status=0, data=data))),
                            memoryview(dst))
    assert dst == data
    other = bytearray(10)
    for reply in (P.pack_cr_data_res(P.cr_data_res(status=0, data=data[:9])),
                  P.pack_cr_data_res(P.cr_data_res(status=1, message="no"))):
        assert not direct.take_data(memoryview(reply), memoryview(other))
    assert not any(other)
