"""The attacks of issue 15, each a function against a running server: it plays the hostile client
and asserts that this client got its error. The single tests (one attack, with the victim and the
resource checks around it) and the combined test (every attack at once against one server) both
call these, so that an attack is written once."""
from __future__ import annotations

import array
import fcntl
import hashlib
import mmap
import os
import secrets
import socket
import struct
import threading
import time
from typing import Callable

import pytest

from cricket.client import shm as client_shm
from cricket.client.api import CudaError, connect
from cricket.cudafacts import curesult
from cricket.protocol import gen as P

from hostile_peers import closed_by_server, raw_connection
from kernel_peers import PTX

MIB = 1 << 20
SHM_SIZE = 1 << 20
SEALS = fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL
HEADER = P.CRICKET_SHM_HEADER
LAST_FRAGMENT = 0x80000000
# One thread spinning: a kernel whose length the caller sets by its trip count.
SPIN_PTX = b""".version 7.0
.target sm_50
.address_size 64
.visible .entry spin(.param .u64 trips)
{
    .reg .pred %p;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [trips];
    mov.u64 %rd2, 0;
LOOP:
    add.u64 %rd2, %rd2, 1;
    setp.lt.u64 %p, %rd2, %rd1;
    @%p bra LOOP;
    ret;
}
"""


# ---- shared memory (findings 1-3) ------------------------------------------------------------

def memfd(size: int = SHM_SIZE, seals: int = SEALS) -> tuple[int, mmap.mmap]:
    """A memfd of ``size`` bytes, its pages allocated, mapped, and sealed with ``seals``."""
    fd = os.memfd_create("attacker", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    os.ftruncate(fd, size)
    os.posix_fallocate(fd, 0, size)
    view = mmap.mmap(fd, size)
    if seals:
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, seals)
    return fd, view


def hand_over(conn, fd: int, size: int, patience: float = 30) -> None:
    """Hand the server a region as the client library does, trying again while the descriptor
    inbox is flooded by another client (it closes new connections unanswered then)."""
    deadline = time.monotonic() + patience
    while True:
        try:
            return client_shm._hand_over(conn._rpc, fd, size)
        except OSError as exc:
            # closed before it answered (an empty reason), or not let in at all
            flooded = isinstance(exc, (BlockingIOError, ConnectionError)) or str(exc).endswith("refused it: ")
            if not flooded or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def shrink_a_region(server) -> None:
    """Finding 1: hand over a region, then shrink it (SIGBUS once); an unsealed one is refused."""
    with connect(server.address) as attacker:
        fd, view = memfd()
        try:
            hand_over(attacker, fd, SHM_SIZE)
            with pytest.raises(PermissionError):               # the seal forbids ftruncate
                os.ftruncate(fd, HEADER)
            abuf = attacker.alloc(SHM_SIZE)
            view[HEADER:HEADER + 4096] = b"a" * 4096
            res = attacker._stub.CR_MEMCPY_HTOD_SHM(P.cr_shm_htod_args(
                dst=abuf.device_ptr, stream=0, offset=SHM_SIZE - 4096, size=4096, sequence=0))
            assert res.status == 0                              # the server's pages are all there
            res = attacker._stub.CR_MEMCPY_DTOH_SHM(P.cr_shm_dtoh_args(
                src=abuf.device_ptr, stream=0, offset=HEADER, size=SHM_SIZE))
            assert res.status == curesult.INVALID_VALUE       # past the region's end
        finally:
            view.close()
            os.close(fd)
        # An unsealed memfd is refused before it is mapped, so shrinking it touches nothing.
        fd, view = memfd(seals=0)
        try:
            with pytest.raises(OSError, match="F_SEAL_SHRINK"):
                hand_over(attacker, fd, SHM_SIZE)
            os.ftruncate(fd, HEADER)
        finally:
            view.close()
            os.close(fd)


def inbox_address(conn) -> str:
    res = conn._stub.CR_SHM_TICKET()
    assert res.status == 0
    return res.ticket.address


def send_to_inbox(address: str, ticket: bytes, fds: list[int], patience: float = 30) -> bytes:
    """Send one message to the descriptor inbox and return its answer. While the inbox is full (its
    backlog, or MAX_CONNECTIONS open: another client flooding it) it closes new connections
    unanswered; the sender tries again for ``patience`` seconds, as a client would."""
    deadline = time.monotonic() + patience
    while True:
        with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as s:
            s.settimeout(10)
            try:
                s.connect("\0" + address)
                s.sendmsg([ticket], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))] if fds else [])
                answer = s.recv(1024)
            except (BlockingIOError, ConnectionError):
                answer = b""
        if answer or time.monotonic() > deadline:
            return answer
        time.sleep(0.05)


def reach_for_another_region(server, victim_ptr: int) -> None:
    """Finding 2: name the victim's region, guess or reuse inbox tickets, and write through its own
    region into the victim's allocation at ``victim_ptr``: each is refused."""
    with connect(server.address) as attacker:
        for path in ("/dev/shm/cricket-shm-1-" + "0" * 32, f"/proc/{os.getpid()}/fd/0",
                     f"/proc/{server.process.pid}/fd/3"):
            res = attacker._stub.CR_SHM_ATTACH(P.cr_shm_attach_args(path=path, size=32 << 20))
            assert res.status == curesult.NOT_SUPPORTED
        address = inbox_address(attacker)
        fd, view = memfd()
        try:
            for _ in range(20):
                assert send_to_inbox(address, secrets.token_bytes(32), [fd]).startswith(b"\1")
            assert send_to_inbox(address, b"", [fd]).startswith(b"\1")
            ticket = attacker._stub.CR_SHM_TICKET().ticket.ticket
            assert send_to_inbox(address, ticket, [fd, fd]).startswith(b"\1")     # spent by that
            ticket = attacker._stub.CR_SHM_TICKET().ticket.ticket
            assert send_to_inbox(address, ticket, [fd]) == b"\0"
            assert send_to_inbox(address, ticket, [fd]).startswith(b"\1")        # once only
            assert attacker._stub.CR_SHM_ATTACH_FD(SHM_SIZE).status == 0          # its own session
            # Whatever the attacker writes into its region reaches only its own allocations.
            view[HEADER:SHM_SIZE] = b"\xee" * (SHM_SIZE - HEADER)
            res = attacker._stub.CR_MEMCPY_HTOD_SHM(P.cr_shm_htod_args(
                dst=victim_ptr, stream=0, offset=HEADER, size=4096, sequence=0))
            assert res.status == curesult.INVALID_VALUE
        finally:
            view.close()
            os.close(fd)


def hard_link_to_another_programs_object(server) -> None:
    """Finding 3: a hard link under a cricket name to another program's 0600 object is never
    mapped, by name or by descriptor. Skips where fs.protected_hardlinks forbids the link."""
    secret = secrets.token_bytes(64 << 10)
    other = f"/dev/shm/other-program-{secrets.token_hex(8)}"
    link = f"/dev/shm/cricket-shm-{os.getpid()}-{secrets.token_hex(16)}"
    fd = os.open(other, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, secret + bytes(SHM_SIZE - len(secret)))
    os.close(fd)
    try:
        try:
            os.link(other, link)                       # O_NOFOLLOW does not see this
        except PermissionError:
            pytest.skip("this host's fs.protected_hardlinks forbids the link")
        with connect(server.address) as attacker:
            res = attacker._stub.CR_SHM_ATTACH(P.cr_shm_attach_args(path=link, size=SHM_SIZE))
            assert res.status == curesult.NOT_SUPPORTED
            fd = os.open(link, os.O_RDWR)             # its descriptor, even, is not a sealed memfd
            try:
                with pytest.raises(OSError, match="F_SEAL_SHRINK"):
                    hand_over(attacker, fd, SHM_SIZE)
            finally:
                os.close(fd)
            with open(f"/proc/{server.process.pid}/maps") as maps:
                mapped = maps.read()
            assert os.path.basename(other) not in mapped and os.path.basename(link) not in mapped
        with open(other, "rb") as f:
            assert f.read(len(secret)) == secret
    finally:
        for path in (other, link):
            if os.path.exists(path):
                os.unlink(path)


def silent_inbox_connections(server, while_open: Callable[[], None] = lambda: None) -> None:
    """More connections to the descriptor inbox than it takes, none saying anything: each is
    closed by the server. ``while_open`` runs while they are all open."""
    from cricket.server.fd_inbox import CONNECTION_TIMEOUT, MAX_CONNECTIONS
    with connect(server.address) as attacker:
        address = inbox_address(attacker)
        silent = []
        try:
            for _ in range(MAX_CONNECTIONS + 20):
                s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
                silent.append(s)
                s.connect("\0" + address)
            while_open()
            deadline = time.monotonic() + CONNECTION_TIMEOUT + 10
            for s in silent:
                s.settimeout(max(0.1, deadline - time.monotonic()))
                assert s.recv(16) == b""
        finally:
            for s in silent:
                s.close()


# ---- before HELLO (finding 4) ----------------------------------------------------------------

def large_record_before_hello(server, connections: int = 3,
                              while_open: Callable[[], None] = lambda: None) -> None:
    """Announce a 100 MiB record before HELLO and send 16 MiB of it: the connection is closed and
    the server does not buffer it. ``while_open`` runs before the attacker looks for the close."""
    strangers = [raw_connection(server) for _ in range(connections)]
    try:
        for sock in strangers:
            sock.sendall(struct.pack(">I", LAST_FRAGMENT | (100 << 20)))
            try:
                for _ in range(256):
                    sock.sendall(b"\0" * 65536)
            except (BrokenPipeError, ConnectionResetError):
                pass
        while_open()
        for sock in strangers:
            assert closed_by_server(sock)
    finally:
        for sock in strangers:
            sock.close()


def idle_connections_before_hello(server, count: int = 200,
                                  while_open: Callable[[], None] = lambda: None) -> None:
    """Open ``count`` connections that never say anything; ``while_open`` runs while they are."""
    strangers = [raw_connection(server) for _ in range(count)]
    try:
        while_open()
    finally:
        for sock in strangers:
            sock.close()


def fragments_past_the_limit_before_hello(server) -> None:
    """Fragments each under the pre-HELLO limit, together over it: the connection is closed."""
    with raw_connection(server) as sock:
        fragment = 40 << 10
        sock.sendall(struct.pack(">I", fragment) + b"\0" * fragment + struct.pack(">I", fragment))
        assert closed_by_server(sock)


def silent_until_the_hello_timeout(server) -> None:
    """A connection that never says HELLO is closed (the server runs with a short --hello-timeout)."""
    with raw_connection(server) as idle:
        assert closed_by_server(idle)


# ---- memory (finding 5) ----------------------------------------------------------------------

def allocate_past_the_share(server, share: int) -> None:
    """Take a session's whole ``share`` (--session-memory), then ask for more: refused with
    CUDA_ERROR_OUT_OF_MEMORY naming the option; cudaMemGetInfo shows what is left, freed bytes
    count again, and the session's data stays as it was."""
    with connect(server.address) as greedy:
        assert greedy.mem_get_info() == (share, share)
        kept = os.urandom(MIB)
        held = greedy.to_device(kept)
        big = greedy.alloc(share - 2 * MIB)
        with pytest.raises(CudaError) as refused:
            greedy.alloc(2 * MIB)
        assert refused.value.code == curesult.OUT_OF_MEMORY
        assert "--session-memory" in refused.value.message
        assert greedy.mem_get_info() == (MIB, share)
        big.free()
        greedy.alloc(share // 2)                       # freed bytes count again
        assert greedy.memcpy_dtoh(held, MIB) == kept


# ---- amplification (finding 6) ---------------------------------------------------------------

def spin_for(spin, seconds: float) -> int:
    """Trips that make the ``spin`` kernel run at least ``seconds``."""
    trips = 1000
    while True:
        t0 = time.perf_counter()
        spin.launch(1, 1, [trips], sync=True)
        took = time.perf_counter() - t0
        if took > 0.2:
            return int(trips * seconds / took) + 1
        trips *= 4


def copies_queued_behind_a_kernel(server, while_queued: Callable[[], None] = lambda: None,
                                  seconds: float = 4.0) -> None:
    """256 MiB of asynchronous copies (64 calls) sent behind a kernel of ``seconds``: the server
    stops reading rather than hold them all; the last copy's data arrives. ``while_queued`` runs
    while the kernel holds the queue up."""
    with connect(server.address, shared_memory=False) as conn:
        spin = conn.load_module(SPIN_PTX).get_function("spin")
        trips = spin_for(spin, seconds)
        buf = conn.alloc(4 * MIB)
        chunks = [bytes([i]) * (4 * MIB) for i in range(64)]
        spin.launch(1, 1, [trips])
        sender = threading.Thread(target=lambda: [conn.memcpy_htod(buf, c, sync=False) for c in chunks])
        sender.start()
        while_queued()
        sender.join(120)
        assert not sender.is_alive()
        conn.synchronize()
        assert conn.memcpy_dtoh(buf, 4 * MIB) == chunks[-1]


def load_raw(conn, image: bytes, kind: int = P.CR_IMAGE_PTX):
    """CR_MODULE_LOAD with the image's bytes, as a client that skips the hash offer."""
    return conn._stub.CR_MODULE_LOAD(P.cr_module_load_args(hash=hashlib.sha256(image).digest(),
                                                           kind=kind, image=image))


def offer(conn, image: bytes):
    """CR_MODULE_LOAD by hash only: status CRICKET_NEED_IMAGE when the server does not hold it."""
    return conn._stub.CR_MODULE_LOAD(P.cr_module_load_args(
        hash=hashlib.sha256(image).digest(), kind=P.CR_IMAGE_PTX, image=b""))


def junk_image(server, size: int = 2 * MIB) -> None:
    """A junk "PTX" image fails with CUDA_ERROR_INVALID_PTX and is not cached for anyone."""
    junk = b".version 7.0\n.target sm_50\n.address_size 64\n" + os.urandom(size)
    with connect(server.address) as attacker, connect(server.address) as other:
        assert load_raw(attacker, junk).status == curesult.INVALID_PTX
        assert offer(other, junk).status == P.CRICKET_NEED_IMAGE


def image_over_the_cap(server, cap: int) -> None:
    """An image over --max-image (``cap`` bytes) is refused: in a record with INVALID_VALUE naming
    the option, past the record limit by closing the connection."""
    with connect(server.address) as attacker:
        res = load_raw(attacker, SPIN_PTX + b"\n" * (cap + 1000))
        assert res.status == curesult.INVALID_VALUE and "--max-image" in res.message
        with pytest.raises((ConnectionError, OSError, CudaError)):
            load_raw(attacker, SPIN_PTX + b"\n" * (8 * cap))


# ---- kernels (finding 7) ---------------------------------------------------------------------

def launch_forever(conn, grid: int = 1, kernel: str = "forever") -> None:
    """Launch an endless kernel asynchronously and make sure it left the client."""
    out = conn.alloc(4 * 32)
    args = [out] if kernel == "forever" else []
    conn.load_module(PTX).get_function(kernel).launch(grid, 32 if kernel == "forever" else 1, args)
    conn.ping()


def spin_and_leave(server, grid: int = 1, kernel: str = "forever", seconds: float = 1.0) -> None:
    """Launch an endless kernel (or 2^31-1 blocks of an empty one), let it run, then disconnect:
    the server must end it (the caller checks the workers)."""
    with connect(server.address) as spinner:
        launch_forever(spinner, grid, kernel)
        time.sleep(seconds)


# ---- admin (finding 8) -----------------------------------------------------------------------

MARKED_BACKEND = "side_effect_backend:Backend"


def load_backend_by_module(server, admin_token: str, mark) -> None:
    """LOAD_BACKEND("module:Class") without --allow-backend-import: NOT_PERMITTED, nothing imported."""
    with connect(server.address, token=admin_token) as admin:
        with pytest.raises(CudaError) as info:
            admin.load_backend(MARKED_BACKEND)
        assert info.value.code == curesult.NOT_PERMITTED
        assert "--allow-backend-import" in info.value.message
    assert not mark.exists()
