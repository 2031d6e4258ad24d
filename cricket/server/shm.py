"""The server's half of the shared-memory bulk path (``CR_SHM_TICKET``, ``CR_SHM_ATTACH_FD`` and the
``*_SHM`` copies).

A client on the same host creates a memfd, sizes it, allocates its pages, seals it against
shrinking and growing (and against more seals) and hands the descriptor to the server's
:mod:`~cricket.server.fd_inbox` with a one-time ticket of its session; ``CR_SHM_ATTACH_FD`` maps
it (:class:`SharedRegion`, kept in ``Session.shared_region``) and the copies then name ranges of it
instead of carrying the bytes on the socket. The mapping is the session's: it goes when the
connection closes (:func:`detach`).

The server never opens a path a client names (``CR_SHM_ATTACH`` is refused), so a client cannot
make it map another program's or another session's memory. A descriptor is mapped only when it is a
regular file on tmpfs (not hugetlbfs, whose faults may fail), sealed with ``F_SEAL_SHRINK |
F_SEAL_GROW | F_SEAL_SEAL`` and without write seals, of exactly the size declared, with all its
pages allocated: no later ``ftruncate`` can pull pages from under the server (SIGBUS), and reading
or writing the mapping allocates nothing. (A client could still punch holes into its pages; under
strict overcommit, ``vm.overcommit_memory=2``, refilling one could then fail with SIGBUS.)

Refused, with a clear error and no mapping: a peer that is not on this host (TCP from an address
that is not loopback), ``CRICKET_SHM=0`` in the server's environment, any descriptor failing the
checks above, a size over ``CRICKET_MAX_SHM``. Every copy's range is checked against the mapping
before anything is touched.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import fcntl
import logging
import mmap
import os
import stat
import struct
from typing import Any

from .. import _env
from ..cudafacts import curesult
from ..rpc.transport import is_loopback
from ..backends.base import BackendError
from .fd_inbox import FdInbox
from .session import Session

log = logging.getLogger(__name__)

MAX_SHM = 1073741824     # CRICKET_MAX_SHM
SHM_HEADER = 4096        # CRICKET_SHM_HEADER: the region's first bytes hold no data
TMPFS_MAGIC = 0x01021994     # statfs f_type of tmpfs, where memfd_create puts its files
NEEDED_SEALS = fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL
WRITE_SEALS = fcntl.F_SEAL_WRITE | getattr(fcntl, "F_SEAL_FUTURE_WRITE", 0x10)
_SEQUENCE = struct.Struct("=Q")
_libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)


def shm_enabled() -> bool:
    """False when the server's environment sets ``CRICKET_SHM=0`` (attaching is then refused)."""
    return _env.flag("CRICKET_SHM")


def same_host(peer: Any) -> bool:
    """True for a peer on this host: a Unix socket (no address tuple) or a loopback TCP address."""
    if not isinstance(peer, tuple):
        return True              # AF_UNIX: asyncio reports a path (str or bytes), often empty
    return is_loopback(peer[0])


def _filesystem_type(fd: int) -> int:
    """statfs ``f_type`` of the file system holding ``fd`` (the first field of struct statfs)."""
    buf = ctypes.create_string_buffer(256)
    if _libc.fstatfs(fd, buf) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return ctypes.c_long.from_buffer(buf).value & 0xFFFFFFFF


def _refuse(why: str) -> BackendError:
    return BackendError(curesult.INVALID_VALUE, f"shared region refused: {why}")


def check_region_fd(fd: int, size: int) -> None:
    """Raise unless ``fd`` is a sealed, fully allocated tmpfs file of ``size`` bytes."""
    if not SHM_HEADER < size <= MAX_SHM:
        raise _refuse(f"{size} bytes; give more than {SHM_HEADER} and at most {MAX_SHM} "
                      "(CRICKET_SHM_SIZE)")
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or _filesystem_type(fd) != TMPFS_MAGIC:
        raise _refuse("the descriptor is not a memfd on tmpfs")
    try:
        seals = fcntl.fcntl(fd, fcntl.F_GET_SEALS)
    except OSError:
        seals = 0
    if seals & NEEDED_SEALS != NEEDED_SEALS:
        raise _refuse("seal the memfd with F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL first")
    if seals & WRITE_SEALS:
        raise _refuse("the memfd is sealed against writing; the server writes device-to-host copies")
    if st.st_size != size:
        raise _refuse(f"the memfd holds {st.st_size} bytes, not the {size} declared")
    if st.st_blocks * 512 < size:
        raise _refuse("allocate all the memfd's pages first (fallocate)")


class SharedRegion:
    """A client's region mapped into this process."""

    def __init__(self, fd: int, size: int) -> None:
        check_region_fd(fd, size)
        try:
            self.map = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        except OSError as exc:
            raise _refuse(f"cannot map it: {exc.strerror}") from None
        self.size = size
        self.view = memoryview(self.map)
        pin = ctypes.c_char.from_buffer(self.map)     # for the address only; released at once
        self.address = ctypes.addressof(pin)
        del pin

    def range(self, offset: int, size: int, what: str) -> memoryview:
        """The bytes [offset, offset+size) of the data area; raises unless they lie inside it."""
        if offset < SHM_HEADER or size < 0 or offset + size > self.size:
            raise BackendError(curesult.INVALID_VALUE,
                               f"{what}: region range {offset}+{size} lies outside the data area "
                               f"[{SHM_HEADER}, {self.size}) of the shared region")
        return self.view[offset:offset + size]

    def publish(self, sequence: int) -> None:
        """Tell the client that the asynchronous copy ``sequence`` has taken its bytes."""
        _SEQUENCE.pack_into(self.map, 0, sequence & 0xFFFFFFFFFFFFFFFF)

    def close(self) -> None:
        self.view.release()
        try:
            self.map.close()
        except BufferError:      # a view is still alive somewhere: the collector unmaps it later
            log.warning("a shared region is still in use; unmapped when released")


def region_of(session: Session) -> SharedRegion:
    region = session.shared_region
    if region is None:
        raise BackendError(curesult.INVALID_VALUE,
                           "this session has no shared region: call CR_SHM_ATTACH_FD first")
    return region


# --- the procedures (run on the session's worker) ------------------------------------------------

def _check_peer(session: Session, peer: Any) -> None:
    if session.backend is None:
        raise BackendError(curesult.NOT_INITIALIZED, "call HELLO before any other procedure")
    if not shm_enabled():
        raise BackendError(curesult.NOT_SUPPORTED, "this server has shared memory turned off (CRICKET_SHM=0)")
    if not same_host(peer):
        raise BackendError(curesult.NOT_SUPPORTED,
                           f"shared memory needs a client on the server's host; {peer[0]} is not "
                           "a loopback address")


def shm_attach(session: Session, path: str, size: int, peer: Any) -> None:
    raise BackendError(curesult.NOT_SUPPORTED,
                       "CR_SHM_ATTACH names a path, and this server maps no path a client names; "
                       "pass a sealed memfd (CR_SHM_TICKET, then CR_SHM_ATTACH_FD)")


def shm_ticket(session: Session, inbox: FdInbox, peer: Any) -> tuple[str, bytes]:
    """A one-time ticket for handing the session's region to ``inbox``: (address, secret)."""
    _check_peer(session, peer)
    if session.shm_ticket is not None:
        inbox.withdraw(session.shm_ticket)
    ticket = session.shm_ticket = inbox.issue(session.id)
    return inbox.address, ticket.secret


def shm_attach_fd(session: Session, size: int, peer: Any) -> None:
    """Map the descriptor that came to the inbox with this session's ticket."""
    _check_peer(session, peer)
    ticket, session.shm_ticket = session.shm_ticket, None
    fd = ticket.take() if ticket is not None else -1
    if fd < 0:
        raise BackendError(curesult.INVALID_VALUE,
                           "no descriptor came with this session's ticket: call CR_SHM_TICKET and "
                           "send the memfd to its address first")
    try:
        region = SharedRegion(fd, size)
    finally:
        os.close(fd)
    old = session.shared_region
    session.shared_region = region
    if old is not None:
        old.close()
    log.info("session %d: shared region of %d bytes attached", session.id, size)


def memcpy_htod_shm(session: Session, dst: int, stream: int, offset: int, size: int,
                    sequence: int = 0, publish: bool = False) -> None:
    try:
        region = region_of(session)
        if session.backend is None:
            raise BackendError(curesult.NOT_INITIALIZED, "call HELLO before any other procedure")
        data = region.range(offset, size, "copy to device")
        session.allocations.check(dst, size)
        session.device_of(dst).memcpy_htod_host(dst, data, region.address + offset, session.stream(stream))
    finally:
        if publish and session.shared_region is not None:
            session.shared_region.publish(sequence)     # even after a failure: the range is free


def memcpy_htod_shm_async(session: Session, dst: int, stream: int, offset: int, size: int,
                          sequence: int) -> None:
    memcpy_htod_shm(session, dst, stream, offset, size, sequence, publish=True)


def memcpy_dtoh_shm(session: Session, src: int, stream: int, offset: int, size: int) -> None:
    if session.backend is None:
        raise BackendError(curesult.NOT_INITIALIZED, "call HELLO before any other procedure")
    session.raise_async_error()
    region = region_of(session)
    into = region.range(offset, size, "copy from device")
    session.allocations.check(src, size)
    session.device_of(src).memcpy_dtoh_host(src, into, region.address + offset, session.stream(stream))


def detach(session: Session) -> None:
    """Unmap the session's region (at the end of the connection, on its worker)."""
    ticket, session.shm_ticket = session.shm_ticket, None
    if ticket is not None:
        ticket.close()
    region = session.shared_region
    if region is not None:
        session.shared_region = None
        region.close()
        log.info("session %d: shared region unmapped", session.id)
