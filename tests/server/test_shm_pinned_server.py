"""Pinned regions (CR_SHM_ATTACH_PINNED, CR_SHM_DETACH_PINNED, CR_MEMCPY_*_PINNED) against a careless
or hostile client: raw calls with hand-made memfds. Copies move the bytes with no header; bad ranges,
numbers of no region and another session's numbers get error replies and the server keeps serving;
the per-session and server-wide bounds refuse past them and free their room when regions go.
Real server processes (emu backend) on loopback TCP.
"""
from __future__ import annotations

import fcntl
import mmap
import os
import secrets
import time

import pytest

from cricket.client import shm as client_shm
from cricket.client.api import connect
from cricket.cudafacts import curesult
from cricket.protocol import gen as P

SIZE = 64 * 1024
SEALS = fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL


def _memfd(size: int = SIZE, seals: int = SEALS) -> tuple[int, mmap.mmap]:
    fd = os.memfd_create("hand-made-pinned", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    os.ftruncate(fd, size)
    os.posix_fallocate(fd, 0, size)
    if seals:
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, seals)
    return fd, mmap.mmap(fd, size)


def _attach(conn, size: int = SIZE, seals: int = SEALS) -> tuple[object, mmap.mmap]:
    """Hand a fresh memfd over as a pinned region: (the cr_pinned_res, our mapping of it)."""
    fd, view = _memfd(size, seals)
    try:
        client_shm.send_descriptor(conn._rpc, fd)
    finally:
        os.close(fd)
    return conn._stub.CR_SHM_ATTACH_PINNED(size), view


def _copy_args(region: int, device: int, offset: int, size: int):
    return P.cr_pinned_copy_args(region=region, device=device, stream=0, offset=offset, size=size)


def test_copies_between_a_pinned_region_and_the_device_move_the_bytes(emu_server):
    with connect(emu_server.address) as conn:
        res, view = _attach(conn)
        assert res.status == 0
        buf = conn.alloc(SIZE)
        payload = secrets.token_bytes(SIZE)
        view[:] = payload                                   # offset 0: pinned regions have no header
        assert conn._stub.CR_MEMCPY_HTOD_PINNED(_copy_args(res.region, buf.device_ptr, 0, SIZE)).status == 0
        assert conn.memcpy_dtoh(buf, SIZE) == payload
        conn.memcpy_htod(buf, payload[::-1])
        assert conn._stub.CR_MEMCPY_DTOH_PINNED(_copy_args(res.region, buf.device_ptr, 0, SIZE)).status == 0
        assert view[:] == payload[::-1]


BAD_RANGES = [(SIZE, 1), (SIZE - 4, 8), (2**64 - 1, 2), (0, 2**64 - 1), (0, SIZE + 1)]


@pytest.mark.parametrize("offset,size", BAD_RANGES)
def test_ranges_outside_a_pinned_region_get_an_error_and_the_server_keeps_serving(emu_server, offset, size):
    with connect(emu_server.address) as conn:
        res, _ = _attach(conn)
        buf = conn.alloc(2 * SIZE)
        for call in (conn._stub.CR_MEMCPY_HTOD_PINNED, conn._stub.CR_MEMCPY_DTOH_PINNED):
            bad = call(_copy_args(res.region, buf.device_ptr, offset, size))
            assert bad.status == curesult.INVALID_VALUE and "outside the data area" in bad.message
        assert conn._stub.CR_MEMCPY_HTOD_PINNED(_copy_args(res.region, buf.device_ptr, 0, SIZE)).status == 0


def test_a_session_cannot_name_another_sessions_pinned_region(emu_server):
    with connect(emu_server.address) as victim, connect(emu_server.address) as attacker:
        vres, vview = _attach(victim)
        secret = secrets.token_bytes(SIZE)
        vview[:] = secret
        abuf = attacker.alloc(SIZE)
        for region in (vres.region, vres.region + 1, 0, 2**32 - 1):     # it has none yet
            bad = attacker._stub.CR_MEMCPY_HTOD_PINNED(_copy_args(region, abuf.device_ptr, 0, SIZE))
            assert bad.status == curesult.INVALID_VALUE and "not mapped in this session" in bad.message
        ares, aview = _attach(attacker)               # its own numbers name only its own memory
        assert ares.status == 0 and ares.region == vres.region
        assert attacker._stub.CR_MEMCPY_HTOD_PINNED(_copy_args(ares.region, abuf.device_ptr, 0, SIZE)).status == 0
        assert attacker.memcpy_dtoh(abuf, SIZE) == bytes(SIZE)
        assert attacker._stub.CR_MEMCPY_DTOH_PINNED(_copy_args(ares.region, abuf.device_ptr, 0, SIZE)).status == 0
        assert vview[:] == secret


@pytest.mark.parametrize("start,size", [(SIZE - 8, 16), (-16, 32), (0, SIZE + 1)])
def test_device_ranges_past_an_allocation_are_refused_and_write_nothing(emu_server, start, size):
    """The server answers small pinned copies on its event loop (the session's worker idle): the
    device range must lie in one allocation of the session, and a refused copy touches no memory."""
    with connect(emu_server.address) as conn:
        res, view = _attach(conn, 2 * SIZE)
        view[:] = b"\xaa" * (2 * SIZE)
        buf, neighbour = conn.alloc(SIZE), conn.alloc(SIZE)
        conn.memcpy_htod(neighbour, b"\x11" * SIZE)
        for call in (conn._stub.CR_MEMCPY_HTOD_PINNED, conn._stub.CR_MEMCPY_DTOH_PINNED):
            bad = call(_copy_args(res.region, buf.device_ptr + start, 0, size))
            assert bad.status == curesult.INVALID_VALUE and "not inside an allocation" in bad.message
        assert conn.memcpy_dtoh(neighbour, SIZE) == b"\x11" * SIZE
        assert view[:] == b"\xaa" * (2 * SIZE)
        assert conn._stub.CR_MEMCPY_HTOD_PINNED(_copy_args(res.region, buf.device_ptr, 0, SIZE)).status == 0
        assert conn.memcpy_dtoh(buf, SIZE) == b"\xaa" * SIZE


def test_a_module_variable_is_copied_through_a_pinned_region(emu_server, fatbins):
    """A module variable's allocation stands in for its device in the session's table: a pinned
    copy finds the device behind it, both ways."""
    with connect(emu_server.address) as conn:
        res, view = _attach(conn)
        counter = conn.load_module(fatbins["misc"]).get_global("counter")
        view[:4] = (1234).to_bytes(4, "little")
        assert conn._stub.CR_MEMCPY_HTOD_PINNED(_copy_args(res.region, counter.device_ptr, 0, 4)).status == 0
        assert conn.memcpy_dtoh(counter, 4) == (1234).to_bytes(4, "little")
        conn.memcpy_htod(counter, (77).to_bytes(4, "little"))
        assert conn._stub.CR_MEMCPY_DTOH_PINNED(_copy_args(res.region, counter.device_ptr, 8, 4)).status == 0
        assert view[8:12] == (77).to_bytes(4, "little")


def test_a_detached_pinned_region_is_no_longer_copied_through(emu_server):
    with connect(emu_server.address) as conn:
        res, _ = _attach(conn)
        buf = conn.alloc(SIZE)
        assert conn._stub.CR_SHM_DETACH_PINNED(res.region).status == 0
        bad = conn._stub.CR_MEMCPY_HTOD_PINNED(_copy_args(res.region, buf.device_ptr, 0, 16))
        assert bad.status == curesult.INVALID_VALUE
        again = conn._stub.CR_SHM_DETACH_PINNED(res.region)
        assert again.status == curesult.INVALID_VALUE and "not mapped in this session" in again.message


def test_a_pinned_region_it_could_lose_pages_of_is_refused(emu_server):
    with connect(emu_server.address) as conn:
        res, _ = _attach(conn, seals=fcntl.F_SEAL_SHRINK)             # could still grow
        assert res.status == curesult.INVALID_VALUE and "F_SEAL_SHRINK | F_SEAL_GROW" in res.message
        res = conn._stub.CR_SHM_ATTACH_PINNED(SIZE)                    # no descriptor sent
        assert res.status == curesult.INVALID_VALUE and "no descriptor came" in res.message


def test_pinned_regions_per_session_are_bounded(start_server):
    server = start_server("--backend", "emu", env={"CRICKET_PINNED_REGIONS": "2"})
    with connect(server.address) as conn:
        first, _ = _attach(conn)
        assert first.status == 0 and _attach(conn)[0].status == 0
        third, _ = _attach(conn)
        assert third.status == curesult.OUT_OF_MEMORY and "CRICKET_PINNED_REGIONS" in third.message
        assert conn._stub.CR_SHM_DETACH_PINNED(first.region).status == 0
        assert _attach(conn)[0].status == 0                            # its room came back


def test_pinned_regions_of_the_whole_server_are_bounded(start_server):
    server = start_server("--backend", "emu", env={"CRICKET_PINNED_REGIONS_TOTAL": "3"})
    with connect(server.address) as one:
        assert _attach(one)[0].status == 0 and _attach(one)[0].status == 0
        with connect(server.address) as two:
            assert _attach(two)[0].status == 0
            refused, _ = _attach(two)
            assert refused.status == curesult.OUT_OF_MEMORY
            assert "CRICKET_PINNED_REGIONS_TOTAL" in refused.message
    # the sessions' regions go with their connections (on their workers, soon after the close):
    # a new session gets the room again
    with connect(server.address) as three:
        attached = 0
        deadline = time.monotonic() + 30
        while attached < 3 and time.monotonic() < deadline:
            res, _ = _attach(three)
            if res.status == 0:
                attached += 1
            else:
                assert res.status == curesult.OUT_OF_MEMORY
                time.sleep(0.05)
        assert attached == 3
