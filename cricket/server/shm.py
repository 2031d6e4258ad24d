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

Pinned host memory (``cudaMallocHost``) may come the same way, one memfd per allocation
(``CR_SHM_ATTACH_PINNED``, :class:`PinnedRegions` in ``Session.pinned_regions``): a copy between it
and the device is then one memcpy here and none in the client. The same checks apply to each; a
session maps at most ``CRICKET_MAX_PINNED_REGIONS`` of them (fewer with ``CRICKET_PINNED_REGIONS`` in
the server's environment) and the server at most :data:`DEFAULT_PINNED_TOTAL` in all
(``CRICKET_PINNED_REGIONS_TOTAL``); past either the attach is refused and the client keeps that
allocation's copies on the other paths.

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
from . import ledger
from .fd_inbox import FdInbox
from ..protocol import gen as P
from .session import Session

log = logging.getLogger(__name__)

MAX_SHM = 1073741824     # CRICKET_MAX_SHM
SHM_HEADER = 4096        # CRICKET_SHM_HEADER: the region's first bytes hold no data
TMPFS_MAGIC = 0x01021994     # statfs f_type of tmpfs, where memfd_create puts its files
NEEDED_SEALS = fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL
WRITE_SEALS = fcntl.F_SEAL_WRITE | getattr(fcntl, "F_SEAL_FUTURE_WRITE", 0x10)
_SEQUENCE = struct.Struct("=Q")
DEFAULT_PINNED_TOTAL = 16384     # pinned regions mapped by the whole server (each is a mapping)
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


def check_region_fd(fd: int, size: int, header: int = SHM_HEADER) -> None:
    """Raise unless ``fd`` is a sealed, fully allocated tmpfs file of ``size`` bytes, more than
    ``header``."""
    if not header < size <= MAX_SHM:
        raise _refuse(f"{size} bytes; give more than {header} and at most {MAX_SHM}")
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

    def __init__(self, fd: int, size: int, header: int = SHM_HEADER) -> None:
        check_region_fd(fd, size, header)
        self.header = header
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
        if offset < self.header or size < 0 or offset + size > self.size:
            raise BackendError(curesult.INVALID_VALUE,
                               f"{what}: region range {offset}+{size} lies outside the data area "
                               f"[{self.header}, {self.size}) of the shared region")
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


class PinnedRegions:
    """One session's pinned regions by number; the server-wide count is in :data:`ledger.SERVER`."""

    def __init__(self) -> None:
        self.regions: dict[int, SharedRegion] = {}
        self._next = 1

    def attach(self, fd: int, size: int) -> int:
        """Map ``fd`` (checked as a region is) and return its number; refused past the bounds."""
        most = _env.count("CRICKET_PINNED_REGIONS", P.CRICKET_MAX_PINNED_REGIONS,
                               P.CRICKET_MAX_PINNED_REGIONS)
        if len(self.regions) >= most:
            raise BackendError(curesult.OUT_OF_MEMORY,
                               f"this session already maps {len(self.regions)} pinned regions, its most "
                               f"(CRICKET_PINNED_REGIONS); free pinned memory first")
        total = _env.count("CRICKET_PINNED_REGIONS_TOTAL", DEFAULT_PINNED_TOTAL)
        over = ledger.SERVER.take(((ledger.PINNED_REGIONS, 1, total),))
        if over is not None:
            raise BackendError(curesult.OUT_OF_MEMORY,
                               f"the server already maps {over[1]} pinned regions, its "
                               f"most (CRICKET_PINNED_REGIONS_TOTAL)")
        try:
            region = SharedRegion(fd, size, header=0)
        except BaseException:
            ledger.SERVER.give(ledger.PINNED_REGIONS, 1)
            raise
        number = self._next
        self._next = (self._next % 0xFFFFFFFF) + 1
        while number in self.regions:           # after 2**32 attaches: skip the numbers in use
            number = self._next
            self._next = (self._next % 0xFFFFFFFF) + 1
        self.regions[number] = region
        return number

    def get(self, number: int) -> SharedRegion:
        region = self.regions.get(number)
        if region is None:
            raise BackendError(curesult.INVALID_VALUE,
                               f"pinned region {number} is not mapped in this session")
        return region

    def detach(self, number: int) -> None:
        self.get(number)
        self._drop(self.regions.pop(number))

    def close(self) -> None:
        while self.regions:
            self._drop(self.regions.popitem()[1])

    @staticmethod
    def _drop(region: SharedRegion) -> None:
        region.close()
        ledger.SERVER.give(ledger.PINNED_REGIONS, 1)


def region_of(session: Session) -> SharedRegion:
    region = session.shared_region
    if region is None:
        raise BackendError(curesult.INVALID_VALUE,
                           "this session has no shared region: call CR_SHM_ATTACH_FD first")
    return region


# --- the procedures (run on the session's worker) ------------------------------------------------

def _take_ticket_fd(session: Session) -> int:
    ticket, session.shm_ticket = session.shm_ticket, None
    fd = ticket.take() if ticket is not None else -1
    if fd < 0:
        raise BackendError(curesult.INVALID_VALUE,
                           "no descriptor came with this session's ticket: call CR_SHM_TICKET and "
                           "send the memfd to its address first")
    return fd


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
    fd = _take_ticket_fd(session)
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
        session.device_for(dst, size).memcpy_htod_host(dst, data, region.address + offset,
                                                       session.stream(stream) if stream else None)
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
    session.device_for(src, size).memcpy_dtoh_host(src, into, region.address + offset,
                                                   session.stream(stream) if stream else None)


def shm_attach_pinned(session: Session, size: int, peer: Any) -> int:
    """Map the descriptor that came with this session's ticket as a pinned region; its number."""
    _check_peer(session, peer)
    fd = _take_ticket_fd(session)
    try:
        if session.pinned_regions is None:
            session.pinned_regions = PinnedRegions()
        number = session.pinned_regions.attach(fd, size)
    finally:
        os.close(fd)
    log.debug("session %d: pinned region %d of %d bytes attached", session.id, number, size)
    return number


def _pinned(session: Session, number: int) -> SharedRegion:
    region = session.pinned_regions.regions.get(number) if session.pinned_regions is not None else None
    if region is None:
        raise BackendError(curesult.INVALID_VALUE,
                           f"pinned region {number} is not mapped in this session")
    return region


def shm_detach_pinned(session: Session, number: int) -> None:
    _pinned(session, number)
    session.pinned_regions.detach(number)


def memcpy_htod_pinned(session: Session, region: int, dst: int, stream: int, offset: int,
                       size: int) -> None:
    if session.backend is None:
        raise BackendError(curesult.NOT_INITIALIZED, "call HELLO before any other procedure")
    pinned = _pinned(session, region)
    data = pinned.range(offset, size, "copy to device")
    session.device_for(dst, size).memcpy_htod_host(dst, data, pinned.address + offset,
                                                   session.stream(stream) if stream else None)


def memcpy_dtoh_pinned(session: Session, region: int, src: int, stream: int, offset: int,
                       size: int) -> None:
    if session.backend is None:
        raise BackendError(curesult.NOT_INITIALIZED, "call HELLO before any other procedure")
    if session.async_error is not None:
        session.raise_async_error()
    pinned = _pinned(session, region)
    into = pinned.range(offset, size, "copy from device")
    session.device_for(src, size).memcpy_dtoh_host(src, into, pinned.address + offset,
                                                   session.stream(stream) if stream else None)


def detach(session: Session) -> None:
    """Unmap the session's regions (at the end of the connection, on its worker)."""
    pinned, session.pinned_regions = session.pinned_regions, None
    if pinned is not None:
        pinned.close()
    ticket, session.shm_ticket = session.shm_ticket, None
    if ticket is not None:
        ticket.close()
    region = session.shared_region
    if region is not None:
        session.shared_region = None
        region.close()
        log.info("session %d: shared region unmapped", session.id)
