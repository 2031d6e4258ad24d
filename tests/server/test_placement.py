"""CR_PLACE_DEVICES on a real emu server with two devices per session: a session placed at index 3
of a program's combined device list hands out pointers in the ranges it was answered, its kernels,
copies and peer access work there, and the placement is refused once the session has allocated,
past the emu backend's device limit, and a second time, while other sessions keep being served.
The tests of placed sessions share one two-device server (``two_devices``): placement is per session."""
from __future__ import annotations

import struct
from pathlib import Path

import pytest

from cricket.backends import emu_devices
from cricket.backends.base import BackendError
from cricket.client.api import connect
from cricket.cudafacts import curesult
from cricket.protocol import gen as P

VADD_PTX = (Path(__file__).resolve().parents[2] / "examples" / "vector_add.ptx").read_bytes()
N = 256


def _place_stub(stub, first: int):
    return stub.CR_PLACE_DEVICES(P.cr_place_args(first=first))


def _place(conn, first: int):
    return _place_stub(conn._stub, first)


def _vadd(conn, a: list[float], b: list[float]) -> tuple[list[float], list[int]]:
    """c = a + b by the example's kernel on the session's current device; the result and the pointers."""
    bufs = [conn.to_device(struct.pack(f"<{N}f", *a)), conn.to_device(struct.pack(f"<{N}f", *b)), conn.alloc(4 * N)]
    kernel = conn.load_module(VADD_PTX).get_function("_Z4vaddPKfS0_Pfi")
    kernel.launch((1, 1, 1), (N, 1, 1), [*bufs, N], sync=True)
    return list(struct.unpack(f"<{N}f", bufs[2].to_host())), [int(b) for b in bufs]


@pytest.fixture(scope="module")
def two_devices(start_module_server):
    """One emu server with two devices of 64 MiB for the placement tests of this module."""
    return start_module_server("--backend", "emu=devices=2,memory=64M")


def test_a_placed_session_allocates_and_runs_kernels_in_its_answered_ranges(two_devices):
    server = two_devices
    with connect(server.address) as conn:
        reply = _place(conn, 3)
        assert reply.status == 0, reply.message
        ranges = [(r.base, r.base + r.size) for r in reply.ranges]
        assert len(ranges) == 2 and ranges[0][1] <= ranges[1][0]
        # an unplaced session's device pointers lie outside both ranges: the two never collide
        with connect(server.address) as plain:
            unplaced = int(plain.alloc(64))
        assert not any(lo <= unplaced < hi for lo, hi in ranges)
        for device, (lo, hi) in enumerate(ranges):
            conn.set_device(device)
            a, b = [float(i) for i in range(N)], [float(device * 1000 + i) for i in range(N)]
            result, pointers = _vadd(conn, a, b)
            assert all(lo <= p and p + 4 * N <= hi for p in pointers)
            assert result == [x + y for x, y in zip(a, b)]


def test_shared_memory_copies_reach_a_placed_device(two_devices):
    server = two_devices
    with connect(server.address, shared_memory=True) as conn:
        ranges = _place(conn, 4).ranges
        conn.set_device(1)
        data = bytes(range(256)) * (16 << 12)           # 4 MiB: large enough for the shared region
        buf = conn.to_device(data)
        assert ranges[1].base <= int(buf) < ranges[1].base + ranges[1].size
        assert buf.to_host() == data
        stats = conn.session_stats()
        assert stats.get("calls.memcpy_htod_shm") and stats.get("calls.memcpy_dtoh_shm"), stats


def test_peer_access_between_placed_devices_reaches_the_peers_memory(two_devices):
    server = two_devices
    with connect(server.address) as conn:
        ranges = _place(conn, 5).ranges
        peer_data = [float(i) * 0.5 for i in range(N)]
        conn.set_device(1)
        on_peer = conn.to_device(struct.pack(f"<{N}f", *peer_data))
        assert ranges[1].base <= int(on_peer) < ranges[1].base + ranges[1].size
        conn.set_device(0)
        assert conn._stub.CR_PEER_ACCESS(P.cr_peer_access_args(device=0, peer=1, enable=True)).status == 0
        ones, out = conn.to_device(struct.pack(f"<{N}f", *[1.0] * N)), conn.alloc(4 * N)
        kernel = conn.load_module(VADD_PTX).get_function("_Z4vaddPKfS0_Pfi")
        kernel.launch((1, 1, 1), (N, 1, 1), [on_peer, ones, out, N], sync=True)
        assert list(struct.unpack(f"<{N}f", out.to_host())) == [x + 1.0 for x in peer_data]


def test_placement_is_refused_after_use_past_the_limit_and_twice(two_devices):
    server = two_devices
    with connect(server.address) as used:
        used.alloc(64)
        reply = _place(used, 2)
        assert reply.status == curesult.INVALID_VALUE and "must come first" in reply.message
    with connect(server.address) as conn:
        for first in (emu_devices.MAX_DEVICES - 1, 0xFFFFFFFF):      # device 1 would stand past the limit
            reply = _place(conn, first)
            assert reply.status == curesult.INVALID_VALUE
            assert f"MAX_DEVICES = {emu_devices.MAX_DEVICES}" in reply.message
        assert _place(conn, emu_devices.MAX_DEVICES - 2).status == 0     # the last place two devices fit
        reply = _place(conn, 0)
        assert reply.status == curesult.INVALID_VALUE and "once per session" in reply.message
        data = bytes(range(256)) * 16
        assert conn.to_device(data).to_host() == data          # the session goes on where it was placed
    with connect(server.address) as other:                    # and the server serves others
        assert other.to_device(b"still here").to_host() == b"still here"


def test_placement_before_hello_is_refused(start_server):
    from cricket.protocol import SyncClient
    from cricket.rpc import Client
    server = start_server("--backend", "emu")
    with Client(server.address) as rpc:
        reply = SyncClient(rpc).CR_PLACE_DEVICES(P.cr_place_args(first=1))
    assert reply.status == curesult.NOT_INITIALIZED


def test_on_the_cuda_backend_the_driver_chooses_addresses_and_nothing_moves(fake):
    """The cuda backend's side on the fake driver (fake_cuda_driver.py): no ranges, devices opened as ever."""
    from cricket.backends import cuda as cuda_backend
    from cricket.server import placement
    from cricket.server.session import Session
    session = Session()
    session.backend = cuda_backend.CudaBackend()
    assert placement.place_devices(session, 3) == []
    assert session.device_at(0).mem_alloc(16)
    with pytest.raises(BackendError, match="once per session"):
        placement.place_devices(session, 3)


@pytest.mark.gpu
def test_a_cuda_server_answers_no_ranges_and_keeps_serving(cuda_server):
    with connect(cuda_server.address) as gpu:
        reply = _place(gpu, 3)
        assert reply.status == 0 and list(reply.ranges) == []
        data = bytes(range(256)) * 16
        assert gpu.to_device(data).to_host() == data


def test_a_new_backend_by_hello_drops_the_placement(start_server):
    from cricket.protocol import SyncClient
    from cricket.rpc import Client
    server = start_server("--backend", "emu=memory=64M", "--backend", "plugin_backend:HostMemoryBackend")

    def hello(stub, backend: str) -> None:
        reply = stub.CR_HELLO(P.cr_hello_args(protocol=P.CRICKET_PROTOCOL, client="t", token="", backend=backend))
        assert reply.status == 0, reply

    with Client(server.address) as rpc:
        stub = SyncClient(rpc)
        hello(stub, "emu")
        assert _place_stub(stub, 3).status == 0
        hello(stub, "hostmem")                           # a backend that places nothing
        alloc = stub.CR_MEM_ALLOC(4096)
        assert alloc.status == 0, alloc
    with Client(server.address) as rpc:
        stub = SyncClient(rpc)
        hello(stub, "hostmem")
        first = _place_stub(stub, 3)
        assert first.status == 0 and list(first.ranges) == []
        hello(stub, "emu")
        reply = _place_stub(stub, 2)                     # the new backend's placement is its own
        assert reply.status == 0 and len(reply.ranges) == 1, reply
