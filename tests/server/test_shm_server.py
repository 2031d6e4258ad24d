"""The server's shared-memory procedures against a hostile or careless client: raw CR_SHM_TICKET,
CR_SHM_ATTACH_FD and CR_MEMCPY_*_SHM calls with bad descriptors, sizes and ranges get error replies
and the server keeps serving; refusals for peers that are not on the host and for CRICKET_SHM=0.
Real server processes (emu backend) on loopback TCP, memfds made by hand.
"""
from __future__ import annotations

import fcntl
import mmap
import os
import secrets
import struct

import pytest

from cricket.cudafacts import curesult
from cricket.client import shm as client_shm
from cricket.client.api import connect
from cricket.protocol import gen as P
from cricket.server.shm import MAX_SHM, SHM_HEADER, same_host

SIZE = 64 * 1024
SEALS = fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL


class HandMadeRegion:
    """A memfd as a cricket client makes one (or, with arguments, as it must not)."""

    def __init__(self, size: int = SIZE, *, seals: int = SEALS, allocate: bool = True) -> None:
        self.fd = os.memfd_create("hand-made-region", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        os.ftruncate(self.fd, size)
        if allocate:
            os.posix_fallocate(self.fd, 0, size)
        self.map = mmap.mmap(self.fd, size)
        if seals:
            fcntl.fcntl(self.fd, fcntl.F_ADD_SEALS, seals)
        self.size = size

    def remove(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


@pytest.fixture
def region():
    r = HandMadeRegion()
    yield r
    r.remove()


def _attach(conn, region: HandMadeRegion, size: int | None = None) -> str | None:
    """Hand ``region`` to the server as a client does; None when attached, else the refusal."""
    try:
        client_shm._hand_over(conn._rpc, region.fd, region.size if size is None else size)
    except OSError as exc:
        return str(exc)
    return None


def _htod(conn, dst: int, offset: int, size: int):
    return conn._stub.CR_MEMCPY_HTOD_SHM(P.cr_shm_htod_args(dst=dst, stream=0, offset=offset, size=size,
                                                            sequence=0))


def _dtoh(conn, src: int, offset: int, size: int):
    return conn._stub.CR_MEMCPY_DTOH_SHM(P.cr_shm_dtoh_args(src=src, stream=0, offset=offset, size=size))


def test_copies_through_an_attached_region_move_the_bytes(emu_server, region):
    with connect(emu_server.address) as conn:
        assert _attach(conn, region) is None
        region.remove()                                    # the server's mapping stays
        buf = conn.alloc(8192)
        payload = secrets.token_bytes(5000)
        region.map[SHM_HEADER:SHM_HEADER + len(payload)] = payload
        assert _htod(conn, buf.device_ptr, SHM_HEADER, len(payload)).status == 0
        assert _dtoh(conn, buf.device_ptr, SHM_HEADER + 8192, len(payload)).status == 0
        assert region.map[SHM_HEADER + 8192:SHM_HEADER + 8192 + len(payload)] == payload
        assert conn.memcpy_dtoh(buf, len(payload)) == payload


BAD_RANGES = [
    (SIZE, 1),                      # starts at the end
    (0, 16),                        # the header
    (SHM_HEADER - 1, 16),           # straddles the header
    (SHM_HEADER, SIZE),             # runs past the end
    (SIZE - 4, 8),
    (2**64 - 1, 2),                 # would wrap around
    (SHM_HEADER, 2**64 - 1),
]


@pytest.mark.parametrize("offset,size", BAD_RANGES)
def test_ranges_outside_the_region_get_an_error_and_the_server_keeps_serving(emu_server, region,
                                                                            offset, size):
    with connect(emu_server.address) as conn:
        assert _attach(conn, region) is None
        buf = conn.alloc(SIZE)
        for res in (_htod(conn, buf.device_ptr, offset, size), _dtoh(conn, buf.device_ptr, offset, size)):
            assert res.status == curesult.INVALID_VALUE
            assert "outside the data area" in res.message
        conn.ping()
        assert _htod(conn, buf.device_ptr, SHM_HEADER, 64).status == 0
    with connect(emu_server.address) as other:              # another client is served as well
        data = secrets.token_bytes(3 << 20)
        assert other.to_device(data).to_host() == data


def test_device_ranges_are_checked_and_a_copy_without_a_region_is_refused(emu_server, region):
    with connect(emu_server.address) as conn:
        buf = conn.alloc(4096)
        res = _htod(conn, buf.device_ptr, SHM_HEADER, 16)
        assert res.status == curesult.INVALID_VALUE and "CR_SHM_ATTACH_FD first" in res.message
        assert _attach(conn, region) is None
        res = _dtoh(conn, buf.device_ptr + 4000, SHM_HEADER, 200)      # past the allocation's end
        assert res.status == curesult.INVALID_VALUE and "not inside an allocation" in res.message
        res = _htod(conn, 0x1234, SHM_HEADER, 16)
        assert res.status == curesult.INVALID_VALUE


def test_a_failed_asynchronous_copy_is_reported_at_the_next_synchronising_call(emu_server, region):
    with connect(emu_server.address) as conn:
        assert _attach(conn, region) is None
        buf = conn.alloc(4096)
        conn._stub.CR_MEMCPY_HTOD_SHM_ASYNC_batched(P.cr_shm_htod_args(
            dst=buf.device_ptr, stream=0, offset=SIZE + 4096, size=16, sequence=41))
        res = conn._stub.CR_CTX_SYNCHRONIZE()
        assert res.status == curesult.INVALID_VALUE and "outside the data area" in res.message
        # the range counts as taken even so: the client must not wait for it forever
        assert struct.unpack_from("=Q", region.map, 0)[0] == 41
        assert conn._stub.CR_CTX_SYNCHRONIZE().status == 0          # reported once


def test_attach_refuses_a_descriptor_the_server_could_lose_pages_of(emu_server, tmp_path):
    plain = tmp_path / "plain-file"
    plain.write_bytes(bytes(SIZE))
    unsealed = HandMadeRegion(seals=0)
    half_sealed = HandMadeRegion(seals=fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW)
    write_sealed = HandMadeRegion(seals=0)
    write_sealed.map.close()                                    # F_SEAL_WRITE needs no shared mapping
    fcntl.fcntl(write_sealed.fd, fcntl.F_ADD_SEALS, SEALS | fcntl.F_SEAL_WRITE)
    holes = HandMadeRegion(allocate=False)
    good = HandMadeRegion()
    plain_fd = os.open(plain, os.O_RDWR)
    try:
        with connect(emu_server.address) as conn:
            cases = [
                (plain_fd, SIZE, "not a memfd on tmpfs"),
                (unsealed.fd, SIZE, "F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL"),
                (half_sealed.fd, SIZE, "F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL"),
                (write_sealed.fd, SIZE, "sealed against writing"),
                (holes.fd, SIZE, "allocate all"),
                (good.fd, SIZE * 2, "not the 131072 declared"),
                (good.fd, MAX_SHM + 4096, "at most"),
                (good.fd, SHM_HEADER, "more than"),
            ]
            for fd, size, why in cases:
                with pytest.raises(OSError, match="refused") as refused:
                    client_shm._hand_over(conn._rpc, fd, size)
                assert why in str(refused.value), (why, refused.value)
            conn.ping()
            assert _attach(conn, good) is None
    finally:
        os.close(plain_fd)
        for r in (unsealed, half_sealed, write_sealed, holes, good):
            r.remove()


def test_attach_by_path_is_refused(emu_server, region):
    with connect(emu_server.address) as conn:
        res = conn._stub.CR_SHM_ATTACH(P.cr_shm_attach_args(path=f"/proc/self/fd/{region.fd}", size=SIZE))
        assert res.status == curesult.NOT_SUPPORTED and "maps no path a client names" in res.message


def test_attach_fd_without_a_delivered_descriptor_is_refused(emu_server):
    with connect(emu_server.address) as conn:
        res = conn._stub.CR_SHM_ATTACH_FD(SIZE)
        assert res.status == curesult.INVALID_VALUE and "no descriptor came" in res.message
        assert conn._stub.CR_SHM_TICKET().status == 0                # a ticket, but nothing sent
        res = conn._stub.CR_SHM_ATTACH_FD(SIZE)
        assert res.status == curesult.INVALID_VALUE and "no descriptor came" in res.message


def test_ticket_before_hello_is_refused(emu_server):
    from cricket.protocol import PROGRAM, VERSION
    from cricket.rpc import Client
    host, port = emu_server.address.rsplit(":", 1)
    with Client((host, int(port))) as rpc:
        res = P.unpack_cr_shm_ticket_res(rpc.call(PROGRAM, VERSION, client_shm.PROC_TICKET, []))
        assert res.status == curesult.NOT_INITIALIZED


def test_server_with_shared_memory_off_refuses(start_server, region):
    server = start_server("--backend", "emu", env={"CRICKET_SHM": "0"})
    with connect(server.address) as conn:
        res = conn._stub.CR_SHM_TICKET()
        assert res.status == curesult.NOT_SUPPORTED and "CRICKET_SHM=0" in res.message


def _non_loopback_ipv4() -> str | None:
    import subprocess
    try:
        out = subprocess.run(["hostname", "-I"], capture_output=True, text=True, timeout=10).stdout
    except OSError:
        return None
    return next((a for a in out.split() if "." in a and not a.startswith("127.")), None)


def test_a_peer_that_is_not_loopback_is_refused(start_server, region):
    address = _non_loopback_ipv4()
    if address is None:
        pytest.skip("this host has no IPv4 address besides loopback")
    server = start_server("--backend", "emu", "--listen", f"{address}:0", "--insecure")
    with connect(server.address) as conn:
        res = conn._stub.CR_SHM_TICKET()
        assert res.status == curesult.NOT_SUPPORTED and "not a loopback address" in res.message


def test_same_host_rule():
    assert same_host("") and same_host(None) and same_host(b"")         # Unix sockets
    assert same_host(("127.0.0.1", 5)) and same_host(("127.8.9.1", 5))
    assert same_host(("::1", 5, 0, 0)) and same_host(("::ffff:127.0.0.1", 5, 0, 0))
    assert not same_host(("192.0.2.2", 5)) and not same_host(("fd00::2", 5, 0, 0))
    assert not same_host(("not an address", 5))


@pytest.mark.nvcc
def test_an_asynchronous_copy_behind_a_long_kernel_does_not_wait_for_it(emu_server, fatbins):
    import time
    with connect(emu_server.address) as conn:
        spin = conn.load_module(fatbins["misc"]).get_function("spin")
        out = conn.alloc(4 * 256)
        spin.launch(1, 256, [out, 10], sync=True)                   # compiled now
        n = 1000
        while True:                                                 # iterations for >= 0.3 s
            t0 = time.perf_counter()
            spin.launch(1, 256, [out, n], sync=True)
            if time.perf_counter() - t0 > 0.3:
                break
            n *= 4
        data = secrets.token_bytes(20 << 20)                        # more than 3 slots in flight
        buf = conn.to_device(bytes(len(data)))                      # attaches the region
        spin.launch(1, 256, [out, n], sync=False)
        t0 = time.perf_counter()
        conn.memcpy_htod(buf, data, sync=False)
        issued = time.perf_counter() - t0
        t0 = time.perf_counter()
        conn.synchronize()
        waited = time.perf_counter() - t0
        assert conn.memcpy_dtoh(buf, len(data)) == data
        # the slots the server had not taken yet were not waited for: the rest went by socket
        assert issued < waited, (issued, waited)
