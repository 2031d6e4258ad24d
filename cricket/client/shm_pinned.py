"""Pinned host memory the server maps: a copy between it and the device is one memcpy, the server's.

``cudaMallocHost`` / ``cudaHostAlloc`` memory of a process whose server runs on this host is a
memfd of its own (sized, fully allocated and sealed as :mod:`cricket.client.shm`'s region is),
mapped here and handed to the server (``CR_SHM_TICKET``, the descriptor to its inbox, then
``CR_SHM_ATTACH_PINNED``, which returns the region's number). A synchronous copy from or to it
sends only ``(region, offset, size)`` (``CR_MEMCPY_HTOD_PINNED`` / ``CR_MEMCPY_DTOH_PINNED``): the
client copies nothing, the server copies between its mapping and device memory. Without this the
bytes go application buffer → shared slot (client) → device memory (server): two memcpys, which with
one free core can only reach half a memcpy's speed.

When it cannot be had (``CRICKET_SHM=0``, a remote server, a refusal, the server's bounds, an
allocation larger than ``CRICKET_MAX_SHM``) the allocation is ordinary memory and its copies take
the other paths; one warning per connection says why. ``cudaFreeHost`` detaches the region (in order
with the session's work) and unmaps it. A forked child gets private copies of the pages at the same
addresses (a shared mapping would let the child's writes reach its parent's memory), which stay
ordinary memory there.
"""
from __future__ import annotations

import bisect
import ctypes
import fcntl
import logging
import mmap
import os
import threading
from typing import Any

from ..cudafacts import curesult
from ..protocol import PROCEDURES, PROGRAM, VERSION
from ..protocol import gen as P
from . import shm

log = logging.getLogger(__name__)

PROC_HTOD = PROCEDURES["CR_MEMCPY_HTOD_PINNED"]
PROC_DTOH = PROCEDURES["CR_MEMCPY_DTOH_PINNED"]
PAGE = mmap.PAGESIZE
STATUS_OK = shm.STATUS_OK      # the reply of a call that succeeded


class _Mapping:
    """One pinned allocation: its mapping here and its number on the server."""

    __slots__ = ("address", "length", "map", "region", "conn")

    def __init__(self, address: int, length: int, map_: mmap.mmap, region: int, conn: Any) -> None:
        self.address = address
        self.length = length
        self.map = map_
        self.region = region
        self.conn = conn            # None once the server no longer maps it (a forked child)


class PinnedTable:
    """A session's pinned allocations that its server maps, by address (``Session.pinned_table``).
    Lookups take no lock: they read ``index`` (sorted bases and their mappings), which a change
    replaces whole."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.by_address: dict[int, _Mapping] = {}
        self.index: tuple[list[int], list[_Mapping]] = ([], [])
        self.usable: bool | None = None    # None until the first allocation asks (``_table``)
        self.refused = False        # the server refused a region for another reason than its bounds
        self.warned = False         # the one warning of the session was given

    def _reindex(self) -> None:
        bases = sorted(self.by_address)
        self.index = (bases, [self.by_address[b] for b in bases])

    def add(self, mapping: _Mapping) -> None:
        with self._lock:
            self.by_address[mapping.address] = mapping
            self._reindex()

    def pop(self, address: int) -> _Mapping | None:
        with self._lock:
            mapping = self.by_address.pop(address, None)
            self._reindex()
        return mapping

    def find(self, address: int, count: int) -> _Mapping | None:
        """The mapping holding all of ``[address, address + count)``, or None."""
        bases, mappings = self.index
        i = bisect.bisect_right(bases, address) - 1
        if i < 0:
            return None
        m = mappings[i]
        return m if address + count <= m.address + m.length else None


def _address_of(map_: mmap.mmap) -> int:
    pin = ctypes.c_char.from_buffer(map_)       # for the address only; released at once
    address = ctypes.addressof(pin)
    del pin
    return address


def _table(conn: Any) -> PinnedTable | None:
    """The session's table; None when pinned regions cannot be had (said once)."""
    table = conn.pinned_table
    if table.usable is None:
        with table._lock:
            if table.usable is None:
                why = None if shm.enabled() else "CRICKET_SHM=0"
                why = why or shm._local_peer(conn._rpc)
                if why is not None:
                    log.debug("pinned memory stays ordinary memory (%s)", why)
                else:
                    log.info("pinned host memory is mapped by the cricket server too: its copies are "
                             "one memcpy there")
                table.usable = why is None
    return table if table.usable else None


def _give_up(table: PinnedTable, why: str) -> None:
    if table.warned:
        return
    table.warned = True
    log.warning("pinned host memory not shared with the cricket server (%s): its copies take the "
                "shared slots or the socket", why)


def alloc(conn: Any, size: int) -> int | None:
    """``size`` bytes of page-aligned pinned memory the server maps; None when it cannot be had
    (the caller allocates ordinary memory)."""
    table = _table(conn)
    if table is None or table.refused:
        return None
    length = -(-max(size, 1) // PAGE) * PAGE
    if length > shm.MAX_SIZE:
        return None
    res = None
    try:
        fd = os.memfd_create(f"{shm.REGION_PREFIX}pinned-{os.getpid()}", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    except OSError as exc:
        _give_up(table, str(exc))
        return None
    try:
        os.ftruncate(fd, length)
        os.posix_fallocate(fd, 0, length)
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, shm.SEALS)
        map_ = mmap.mmap(fd, length, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        try:
            shm.send_descriptor(conn._rpc, fd)
            res = conn._stub.CR_SHM_ATTACH_PINNED(length)
            if res.status != 0:
                raise OSError(f"the server refused it: {res.message}")
        except BaseException:
            map_.close()
            raise
    except OSError as exc:
        _give_up(table, str(exc))
        if res is None or res.status != curesult.OUT_OF_MEMORY:
            table.refused = True            # for good: no more attempts on this connection
        return None
    finally:
        os.close(fd)
    mapping = _Mapping(_address_of(map_), length, map_, res.region, conn)
    table.add(mapping)
    return mapping.address


def owns(conn: Any, address: int) -> bool:
    return address in conn.pinned_table.by_address


def free(conn: Any, address: int) -> bool:
    """Detach and unmap the pinned allocation at ``address``; False when it is none of ours."""
    mapping = conn.pinned_table.pop(address)
    if mapping is None:
        return False
    if mapping.conn is not None:
        try:
            res = conn._stub.CR_SHM_DETACH_PINNED(mapping.region)
            if res.status != 0:
                log.debug("detaching pinned region %d: %s", mapping.region, res.message)
        except Exception as exc:            # the connection is gone: its regions went with it
            log.debug("detaching pinned region %d: %s", mapping.region, exc)
    mapping.map.close()
    return True


# A copy larger than this goes as parts of this size, all requested before the first reply is
# awaited: the server runs a part of up to one slot (``shm.SLOT``, its ``SHM_INLINE_MAX``) on its
# event loop while the session's worker is idle, which saves the two thread wake-ups of a trip to
# the worker, and the parts arrive together (one wake-up of the server and one of this thread in
# all, where the machine is busy a wake-up may cost more than the copy).
PART = shm.SLOT
MAX_PARTS_IN_FLIGHT = 8


def _copy(conn: Any, proc: int, device: int, host: int, count: int, stream: int, name: str) -> bool:
    table = conn.pinned_table
    mapping = table.find(host, count) if table.by_address else None
    if mapping is None:
        return False
    rpc = conn._rpc
    region, offset = mapping.region, host - mapping.address
    if count <= PART:
        reply = rpc.call(PROGRAM, VERSION, proc, [P.pack_cr_pinned_copy_args_fixed(
            region=region, device=device, stream=stream, offset=offset, size=count)])
        if reply != STATUS_OK:
            conn._check(P.unpack_cr_status_res(reply), name)
        return True
    calls: list = []
    error = None
    done = 0
    try:
        while done < count or calls:
            while done < count and len(calls) < MAX_PARTS_IN_FLIGHT:
                n = min(PART, count - done)
                calls.append(rpc.start(PROGRAM, VERSION, proc, [P.pack_cr_pinned_copy_args_fixed(
                    region=region, device=device + done, stream=stream, offset=offset + done, size=n)]))
                done += n
            reply = calls.pop(0).result()
            if reply != STATUS_OK and error is None:
                error = P.unpack_cr_status_res(reply)
                done = count                    # send no more parts; collect those sent
    finally:
        for call in calls:                      # an exception above: the replies still come
            call.result()
    if error is not None:
        conn._check(error, name)
    return True


def htod(conn: Any, dst: int, src: int, count: int, stream: int) -> bool:
    """A synchronous copy from pinned memory the server maps; False when ``src`` is not in it."""
    return _copy(conn, PROC_HTOD, dst, src, count, stream, "cuMemcpyHtoD")


def dtoh(conn: Any, dst: int, src: int, count: int, stream: int) -> bool:
    """A synchronous copy into pinned memory the server maps; False when ``dst`` is not in it."""
    return _copy(conn, PROC_DTOH, src, dst, count, stream, "cuMemcpyDtoH")


_MAP_FIXED = 0x10
_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]


def forked(conn: Any) -> None:
    """In a forked child: each pinned allocation becomes private memory at the same address with
    the same bytes (the parent's mapping is shared with it and with the server). The mapping
    objects stay, so that freeing unmaps them; the server of the parent is not told."""
    for mapping in list(conn.pinned_table.by_address.values()):
        saved = ctypes.string_at(mapping.address, mapping.length)
        got = _libc.mmap(mapping.address, mapping.length, mmap.PROT_READ | mmap.PROT_WRITE,
                         mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | _MAP_FIXED, -1, 0)
        if got != mapping.address:
            err = ctypes.get_errno()
            raise OSError(err, f"cannot make pinned memory private in a forked child: {os.strerror(err)}")
        ctypes.memmove(mapping.address, saved, mapping.length)
        mapping.conn = None
