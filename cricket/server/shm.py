"""The server's half of the shared-memory bulk path (``CR_SHM_ATTACH`` and the ``*_SHM`` copies).

A client on the same host creates a file under /dev/shm, maps it and names it in ``CR_SHM_ATTACH``;
the server maps the same file for that session (:class:`SharedRegion`, kept in
``Session.shared_region``) and copies name ranges of it instead of carrying the bytes on the socket.
The mapping is the session's: it goes when the connection closes (:func:`detach`).

Refused, with a clear error and no mapping: a peer that is not on this host (TCP from an address
that is not loopback), ``CRICKET_SHM=0`` in the server's environment, a path outside /dev/shm or
not made by a cricket client, a file that is not a regular file private to its owner, a size that
differs from the file's or exceeds ``CRICKET_MAX_SHM``. Every copy's range is checked against the
mapping before anything is touched.
"""
from __future__ import annotations

import ctypes
import logging
import mmap
import os
import re
import stat
import struct
from typing import Any

from .. import _env
from ..cudafacts import curesult
from ..rpc.transport import is_loopback
from ..backends.base import BackendError
from .session import Session

log = logging.getLogger(__name__)

MAX_SHM = 1073741824     # CRICKET_MAX_SHM
SHM_HEADER = 4096        # CRICKET_SHM_HEADER: the region's first bytes hold no data
SHM_DIR = "/dev/shm"
# The names cricket clients give their regions (cricket.client.shm.REGION_PREFIX + random hex).
_NAME = re.compile(r"cricket-shm-[0-9]+-[0-9a-f]{16,64}")
_SEQUENCE = struct.Struct("=Q")


def shm_enabled() -> bool:
    """False when the server's environment sets ``CRICKET_SHM=0`` (attaching is then refused)."""
    return _env.flag("CRICKET_SHM")


def same_host(peer: Any) -> bool:
    """True for a peer on this host: a Unix socket (no address tuple) or a loopback TCP address."""
    if not isinstance(peer, tuple):
        return True              # AF_UNIX: asyncio reports a path (str or bytes), often empty
    return is_loopback(peer[0])


class SharedRegion:
    """A client's region mapped into this process."""

    def __init__(self, path: str, size: int) -> None:
        if not path.startswith(SHM_DIR + "/") or not _NAME.fullmatch(path[len(SHM_DIR) + 1:]):
            raise BackendError(curesult.INVALID_VALUE,
                               f"shared region {path!r} is not a cricket client's file under {SHM_DIR}")
        if not SHM_HEADER < size <= MAX_SHM:
            raise BackendError(curesult.INVALID_VALUE,
                               f"shared region of {size} bytes: give more than {SHM_HEADER} and at most "
                               f"{MAX_SHM} (CRICKET_SHM_SIZE)")
        try:
            fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError as exc:
            raise BackendError(curesult.INVALID_VALUE,
                               f"cannot open shared region {path}: {exc.strerror}") from None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_mode & 0o077:
                raise BackendError(curesult.INVALID_VALUE,
                                   f"shared region {path} must be a regular file of mode 0600")
            if st.st_size != size:
                raise BackendError(curesult.INVALID_VALUE,
                                   f"shared region {path} holds {st.st_size} bytes, not the {size} declared")
            self.map = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        finally:
            os.close(fd)
        self.path = path
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
            log.warning("shared region %s: still in use; unmapped when released", self.path)


def region_of(session: Session) -> SharedRegion:
    region = session.shared_region
    if region is None:
        raise BackendError(curesult.INVALID_VALUE,
                           "this session has no shared region: call CR_SHM_ATTACH first")
    return region


# --- the procedures (run on the session's worker) ------------------------------------------------

def shm_attach(session: Session, path: str, size: int, peer: Any) -> None:
    if session.backend is None:
        raise BackendError(curesult.NOT_INITIALIZED, "call HELLO before any other procedure")
    if not shm_enabled():
        raise BackendError(curesult.NOT_SUPPORTED, "this server has shared memory turned off (CRICKET_SHM=0)")
    if not same_host(peer):
        raise BackendError(curesult.NOT_SUPPORTED,
                           f"shared memory needs a client on the server's host; {peer[0]} is not "
                           "a loopback address")
    region = SharedRegion(path, size)
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
        session.device.memcpy_htod_host(dst, data, region.address + offset, session.stream(stream))
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
    session.device.memcpy_dtoh_host(src, into, region.address + offset, session.stream(stream))


def detach(session: Session) -> None:
    """Unmap the session's region (at the end of the connection, on its worker)."""
    region = session.shared_region
    if region is not None:
        session.shared_region = None
        region.close()
        log.info("session %d: shared region unmapped", session.id)
