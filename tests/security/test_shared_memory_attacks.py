"""Attacks on the shared-memory path (issue 15, findings 1-3) against a real `cricket server`: a client
that shrinks its region, one that names or reaches for another session's region, one that plants a
hard link to another program's /dev/shm object. Each gets an error; the victim's data and the server
survive, and the server's RSS, descriptors and threads return to where they were."""
from __future__ import annotations

import array
import fcntl
import mmap
import os
import secrets
import socket
import time

import pytest

from cricket.client import shm as client_shm
from cricket.client.api import connect
from cricket.cudafacts import curesult
from cricket.protocol import gen as P

from hostile_peers import assert_back_to, resources, warmed_up

SIZE = 1 << 20
SEALS = fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL
HEADER = P.CRICKET_SHM_HEADER


def _memfd(size: int = SIZE, seals: int = SEALS) -> tuple[int, mmap.mmap]:
    fd = os.memfd_create("attacker", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    os.ftruncate(fd, size)
    os.posix_fallocate(fd, 0, size)
    view = mmap.mmap(fd, size)
    if seals:
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, seals)
    return fd, view


def _victim_round_trip(victim, buf) -> bool:
    """The victim copies 2 MiB through its region and reads it back."""
    data = secrets.token_bytes(2 << 20)
    victim.memcpy_htod(buf, data)
    return victim.memcpy_dtoh(buf, len(data)) == data


@pytest.fixture
def server(start_server):
    server = start_server("--backend", "emu")
    server.baseline = warmed_up(server)
    return server


def test_shrinking_a_region_after_attaching_fails_and_the_server_survives(server):
    baseline = server.baseline
    with connect(server.address) as victim, connect(server.address) as attacker:
        vbuf = victim.to_device(bytes(2 << 20))
        assert victim._shm_region
        fd, view = _memfd()
        try:
            client_shm._hand_over(attacker._rpc, fd, SIZE)
            with pytest.raises(PermissionError):               # finding 1: ftruncate, then SIGBUS
                os.ftruncate(fd, HEADER)
            abuf = attacker.alloc(SIZE)
            view[HEADER:HEADER + 4096] = b"a" * 4096
            res = attacker._stub.CR_MEMCPY_HTOD_SHM(P.cr_shm_htod_args(
                dst=abuf.device_ptr, stream=0, offset=SIZE - 4096, size=4096, sequence=0))
            assert res.status == 0                              # the server's pages are all there
            res = attacker._stub.CR_MEMCPY_DTOH_SHM(P.cr_shm_dtoh_args(
                src=abuf.device_ptr, stream=0, offset=HEADER, size=SIZE))
            assert res.status == curesult.INVALID_VALUE       # past the region's end
        finally:
            view.close()
            os.close(fd)
        # An unsealed memfd is refused before it is mapped, so shrinking it touches nothing.
        fd, view = _memfd(seals=0)
        try:
            with pytest.raises(OSError, match="F_SEAL_SHRINK"):
                client_shm._hand_over(attacker._rpc, fd, SIZE)
            os.ftruncate(fd, HEADER)
        finally:
            view.close()
            os.close(fd)
        assert _victim_round_trip(victim, vbuf)
    assert_back_to(server, baseline)


def _inbox_address(conn) -> str:
    res = conn._stub.CR_SHM_TICKET()
    assert res.status == 0
    return res.ticket.address


def _send_to_inbox(address: str, ticket: bytes, fds: list[int]) -> bytes:
    with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as s:
        s.settimeout(10)
        s.connect("\0" + address)
        s.sendmsg([ticket], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))] if fds else [])
        return s.recv(1024)


def test_a_client_cannot_name_guess_or_reuse_its_way_into_another_sessions_region(server):
    baseline = server.baseline
    with connect(server.address) as victim, connect(server.address) as attacker:
        kept = secrets.token_bytes(2 << 20)
        vbuf = victim.to_device(kept)
        assert victim._shm_region
        # Finding 2: name the victim's region. It has no name; any path is refused unopened.
        for path in ("/dev/shm/cricket-shm-1-" + "0" * 32, f"/proc/{os.getpid()}/fd/0",
                     f"/proc/{server.process.pid}/fd/3"):
            res = attacker._stub.CR_SHM_ATTACH(P.cr_shm_attach_args(path=path, size=32 << 20))
            assert res.status == curesult.NOT_SUPPORTED
        # Reach the inbox with guessed tickets, with its own ticket twice, with several descriptors.
        address = _inbox_address(attacker)
        fd, view = _memfd()
        try:
            for _ in range(20):
                assert _send_to_inbox(address, secrets.token_bytes(32), [fd]).startswith(b"\1")
            assert _send_to_inbox(address, b"", [fd]).startswith(b"\1")
            ticket = attacker._stub.CR_SHM_TICKET().ticket.ticket
            assert _send_to_inbox(address, ticket, [fd, fd]).startswith(b"\1")     # spent by that
            ticket = attacker._stub.CR_SHM_TICKET().ticket.ticket
            assert _send_to_inbox(address, ticket, [fd]) == b"\0"
            assert _send_to_inbox(address, ticket, [fd]).startswith(b"\1")        # once only
            assert attacker._stub.CR_SHM_ATTACH_FD(SIZE).status == 0              # its own session
            # Whatever the attacker writes into its region reaches only its own allocations.
            view[HEADER:HEADER + SIZE - HEADER] = b"\xee" * (SIZE - HEADER)
            res = attacker._stub.CR_MEMCPY_HTOD_SHM(P.cr_shm_htod_args(
                dst=vbuf.device_ptr, stream=0, offset=HEADER, size=4096, sequence=0))
            assert res.status == curesult.INVALID_VALUE
        finally:
            view.close()
            os.close(fd)
        assert victim.memcpy_dtoh(vbuf, len(kept)) == kept
        assert _victim_round_trip(victim, vbuf)
    assert_back_to(server, baseline)


def test_a_hard_link_to_another_programs_shm_object_is_never_mapped(server):
    secret = secrets.token_bytes(64 << 10)
    other = f"/dev/shm/other-program-{secrets.token_hex(8)}"
    link = f"/dev/shm/cricket-shm-{os.getpid()}-{secrets.token_hex(16)}"
    fd = os.open(other, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, secret + bytes(SIZE - len(secret)))
    os.close(fd)
    baseline = server.baseline
    try:
        try:
            os.link(other, link)                       # finding 3: O_NOFOLLOW does not see this
        except PermissionError:
            pytest.skip("this host's fs.protected_hardlinks forbids the link")
        with connect(server.address) as attacker:
            res = attacker._stub.CR_SHM_ATTACH(P.cr_shm_attach_args(path=link, size=SIZE))
            assert res.status == curesult.NOT_SUPPORTED
            fd = os.open(link, os.O_RDWR)             # its descriptor, even, is not a sealed memfd
            try:
                with pytest.raises(OSError, match="F_SEAL_SHRINK"):
                    client_shm._hand_over(attacker._rpc, fd, SIZE)
            finally:
                os.close(fd)
            with open(f"/proc/{server.process.pid}/maps") as maps:
                assert os.path.basename(other) not in maps.read()
                assert os.path.basename(link) not in maps.read()
        with open(other, "rb") as f:
            assert f.read(len(secret)) == secret
    finally:
        for path in (other, link):
            if os.path.exists(path):
                os.unlink(path)
    assert_back_to(server, baseline)


def test_silent_inbox_connections_are_bounded_and_closed(server):
    from cricket.server.fd_inbox import CONNECTION_TIMEOUT, MAX_CONNECTIONS
    baseline = server.baseline
    with connect(server.address) as victim:
        address = _inbox_address(victim)
        silent = []
        for _ in range(MAX_CONNECTIONS + 20):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            s.connect("\0" + address)
            silent.append(s)
        time.sleep(0.5)
        assert resources(server.process.pid)[1] <= baseline[1] + MAX_CONNECTIONS + 2
        deadline = time.monotonic() + CONNECTION_TIMEOUT + 10
        for s in silent:                               # each is closed by the server
            s.settimeout(max(0.1, deadline - time.monotonic()))
            assert s.recv(16) == b""
            s.close()
        vbuf = victim.to_device(bytes(2 << 20))
        assert _victim_round_trip(victim, vbuf)
    assert_back_to(server, baseline)
