"""The client's half of the shared-memory bulk path: large copies through a region both processes map.

When the server runs on this host (a Unix socket, or TCP to a loopback address), the first copy of at
least :data:`MIN_COPY` bytes creates a memfd, sizes it, allocates its pages, seals it
(``F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL``: the server maps nothing it could lose pages of),
hands the descriptor to the server's inbox with a one-time ticket of this connection
(``CR_SHM_TICKET``: an abstract Unix socket, ``SCM_RIGHTS``) and maps it with
``CR_SHM_ATTACH_FD``. No name of it exists in any file system. Copies then move the bytes through the
region and the socket carries only ``(offset, size)``:

- The region is cut into slots, a copy into parts (:meth:`SharedRegion.part_size`), and one copy
  keeps at most :data:`DEPTH` slots in flight.
- host → device: the client fills slot k while the server drains slot k-1 into the device. A
  synchronous copy waits for a slot's reply before refilling it; an asynchronous one
  (``CR_MEMCPY_HTOD_SHM_ASYNC``, no reply) numbers its parts, and the server stores the number of
  the last one it has taken at the region's offset 0, so a slot is written again only once the
  server is done with it. Synchronous copies take the slot freed last (still in the CPU cache),
  asynchronous ones the slot freed first (the server is most likely done with it: a run of small
  asynchronous copies goes round the slots instead of waiting for the server at each one).
- device → host: the first parts are requested at once; the client copies slot k out while the
  server fills slot k+1, then requests the next part into slot k. A copy that completes later (into
  pinned memory, at the next synchronising call) requests all its parts at once, each in a slot of
  its own, or, when the region has too few free slots, completes at once.

A copy takes the socket path instead (:mod:`cricket.client.direct`), whole or for its rest, when no
slot is free soon (another thread holds them all, or the server does not take the bytes of an
asynchronous copy within :data:`ASYNC_STALL` seconds, e.g. behind a long kernel). Attaching happens
once per connection; when it fails (remote server, no memory for the region, another network
namespace than the server's, refused by the server) the
connection keeps the socket path and one warning says why. A forked child never uses its parent's
region (each region remembers the process that attached it); the child's own connection attaches
anew. (The child keeps the inherited mapping rather than ``MADV_DONTFORK``: the parent's objects
would otherwise unmap whatever the child later maps at that address when they are collected.)

Environment: ``CRICKET_SHM=0`` turns the path off; ``CRICKET_SHM_SIZE`` sets the region's size
(bytes, or with a K/M/G suffix; default :data:`DEFAULT_SIZE`).
"""
from __future__ import annotations

import array
import collections
import fcntl
import logging
import mmap
import os
import socket
import struct
import threading
import time
from typing import Any

from .. import _env
from ..protocol import PROCEDURES, PROGRAM, VERSION
from ..rpc.transport import is_loopback
from ..protocol import gen as P

log = logging.getLogger(__name__)

REGION_PREFIX = "cricket-shm-"          # the memfd's name (seen in /proc/PID/maps), with the pid
SEALS = fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL
HEADER = 4096                           # CRICKET_SHM_HEADER
MAX_SIZE = 1073741824                   # CRICKET_MAX_SHM
DEFAULT_SIZE = 32 << 20
# Measured through the emu server on the (shared, loaded) 2-core box: every part costs ~0.2-0.4 ms of
# wake-ups and RPC handling besides its memcpy, so parts are large: 4 MiB slots, 3 in flight, a copy
# cut into parts of a quarter of its size (64 KiB multiples, 1 MiB up to a slot) so that a 4-16 MiB
# copy is still pipelined; the few slots in use stay in the CPU cache (LIFO). bench/calls.py, 64 MiB
# H→D / D→H: 1 MiB slots ~2.5-3.1 / ~4.2-5.3 GB/s, 4 MiB slots ~3.9-4.3 / ~6-8.7 GB/s.
SLOT = 4 << 20                          # bytes per slot
DEPTH = 3                               # slots one copy keeps in flight
MIN_PART = 1 << 20                      # a copy up to 1 MiB is one part (Python API, per-call median:
                                        # 1 MiB H→D ~9.5 GB/s as one part, 1.6-5 as four)
# Smaller copies stay inline on the socket: median per call through the Python API, 16 KiB ~45 µs
# either way, 64 KiB 51 µs against 79 µs on the socket, 256 KiB 63 against 118.
MIN_COPY = 64 << 10
SLOT_WAIT = 0.005                       # seconds to wait for a slot another thread holds
ASYNC_STALL = 0.005                     # seconds without progress before an async copy stops waiting
SYNC_STALL = 1.0                        # ... and a synchronous one

PROC_TICKET = PROCEDURES["CR_SHM_TICKET"]
PROC_ATTACH_FD = PROCEDURES["CR_SHM_ATTACH_FD"]
INBOX_TIMEOUT = 5.0                     # seconds to hand the descriptor over
PROC_HTOD = PROCEDURES["CR_MEMCPY_HTOD_SHM"]
PROC_HTOD_ASYNC = PROCEDURES["CR_MEMCPY_HTOD_SHM_ASYNC"]
PROC_DTOH = PROCEDURES["CR_MEMCPY_DTOH_SHM"]
_SEQUENCE = struct.Struct("=Q")
STATUS_OK = P.pack_cr_status_res(P.cr_status_res(status=0))   # the reply of a call that succeeded
_attach_lock = threading.Lock()


def enabled() -> bool:
    """False when ``CRICKET_SHM`` says 0/no/off/false."""
    return _env.flag("CRICKET_SHM")


def region_size() -> int:
    """``CRICKET_SHM_SIZE`` in bytes (K/M/G suffixes), clamped to what the protocol allows."""
    text = os.environ.get("CRICKET_SHM_SIZE", "").strip()
    if not text:
        return DEFAULT_SIZE
    try:
        size = _env.parse_size(text)
    except ValueError:
        log.warning("CRICKET_SHM_SIZE=%r is not a size; using %d bytes", text, DEFAULT_SIZE)
        return DEFAULT_SIZE
    return max(HEADER + 2 * 4096, min(size, MAX_SIZE))


def _local_peer(rpc: Any) -> str | None:
    """None when the server is on this host, else why it is not (or cannot be told)."""
    sock = getattr(rpc, "_sock", None)
    if sock is None:
        return "the RPC client has no socket to inspect"
    if sock.family == socket.AF_UNIX:
        return None
    try:
        host = sock.getpeername()[0]
    except OSError as exc:
        return f"the server's address is unknown ({exc})"
    return None if is_loopback(host) else f"the server at {host} is on another host"


def send_descriptor(rpc: Any, fd: int) -> None:
    """Give the server a memfd: a ticket of the session, then the descriptor to the server's
    inbox with it (the attach call that names what it is comes next). Raises OSError saying why
    when a step fails."""
    res = P.unpack_cr_shm_ticket_res(rpc.call(PROGRAM, VERSION, PROC_TICKET, []))
    if res.status != 0:
        raise OSError(f"the server refused it: {res.message}")
    with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET | socket.SOCK_CLOEXEC) as inbox:
        inbox.settimeout(INBOX_TIMEOUT)
        inbox.connect("\0" + res.ticket.address)
        inbox.sendmsg([res.ticket.ticket], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [fd]))])
        answer = inbox.recv(P.CRICKET_MAX_MESSAGE)
    if answer != b"\0":
        raise OSError(f"the server's descriptor inbox refused it: {answer[1:].decode(errors='replace')}")


def _hand_over(rpc: Any, fd: int, size: int) -> None:
    """Give the server the region's descriptor, then CR_SHM_ATTACH_FD. Raises OSError saying why
    when any step fails."""
    send_descriptor(rpc, fd)
    res = P.unpack_cr_status_res(rpc.call(PROGRAM, VERSION, PROC_ATTACH_FD, [P.pack_cr_size(size)]))
    if res.status != 0:
        raise OSError(f"the server refused it: {res.message}")


class SharedRegion:
    """One connection's region: the mapping, its slots, and the copies through it."""

    def __init__(self, conn: Any, size: int) -> None:
        self.conn = conn
        self.rpc = conn._rpc
        self.pid = os.getpid()
        self.size = size
        fd = os.memfd_create(f"{REGION_PREFIX}{self.pid}", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        try:
            os.ftruncate(fd, size)
            # All pages now: a region short of memory fails here (the copies take the socket),
            # and the server maps only a fully allocated region (no fault there can fail).
            os.posix_fallocate(fd, 0, size)
            fcntl.fcntl(fd, fcntl.F_ADD_SEALS, SEALS)
            self.map = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
            try:
                _hand_over(self.rpc, fd, size)
            except BaseException:
                self.map.close()
                raise
        finally:
            os.close(fd)                # the mappings keep the memory; nothing else needs it
        self.view = memoryview(self.map)
        self.slot = min(SLOT, (size - HEADER) // 2)
        count = (size - HEADER) // self.slot
        self._free = collections.deque(reversed(range(count)))   # slot 0 first
        self._cond = threading.Condition()
        self._sleepers = 0              # threads waiting in _acquire for a slot
        self._needed = [0] * count      # async sequence the server must have published per slot
        self._sequence = 0
        self._send_lock = threading.Lock()

    # --- slots -------------------------------------------------------------------------

    def offset(self, slot: int) -> int:
        return HEADER + slot * self.slot

    def part_size(self, total: int) -> int:
        """The bytes a copy of ``total`` moves per slot: about a quarter of it, so that even a
        copy of a few MiB is pipelined, from :data:`MIN_PART` up to a whole slot."""
        part = -(-total // 4 // 65536) * 65536
        return max(min(MIN_PART, self.slot), min(part, self.slot))

    def published(self) -> int:
        """The sequence number of the last asynchronous copy the server has taken the bytes of."""
        return _SEQUENCE.unpack_from(self.map, 0)[0]

    def _acquire(self, wait: float, oldest: bool = False) -> int | None:
        """A free slot, the one freed last (most likely still in the CPU cache), or with
        ``oldest`` the one freed first (an asynchronous copy: the server has most likely taken
        the bytes out of it already, so the copy need not wait); None when none is free within
        ``wait`` seconds."""
        try:                            # deque.pop/popleft are atomic: no lock when one is free
            return self._free.popleft() if oldest else self._free.pop()
        except IndexError:
            if not wait:
                return None
        with self._cond:
            # Counted before the test, so that a slot freed meanwhile is either seen here or its
            # _release sees a sleeper and notifies.
            self._sleepers += 1
            try:
                self._cond.wait_for(lambda: self._free, wait)
            finally:
                self._sleepers -= 1
        try:
            return self._free.popleft() if oldest else self._free.pop()
        except IndexError:              # another thread took it first
            return None

    def _release(self, slot: int) -> None:
        self._free.append(slot)
        if self._sleepers:
            with self._cond:
                self._cond.notify()

    def _writable(self, slot: int, stall: float) -> bool:
        """Wait until the server has taken the last asynchronous copy out of ``slot``; False when
        it makes no progress for ``stall`` seconds."""
        needed = self._needed[slot]
        last = self.published()
        if last >= needed:
            return True
        since = time.monotonic()
        delay = 20e-6
        while True:
            time.sleep(delay)
            now = self.published()
            if now >= needed:
                return True
            if now != last:
                last, since = now, time.monotonic()
            elif time.monotonic() - since > stall:
                return False
            delay = min(delay * 2, 1e-3)

    def _check(self, call: Any, name: str, error: BaseException | None) -> BaseException | None:
        """Collect ``call``'s cr_status_res; the first error is kept (and returned), not raised, so
        that every slot comes back before the copy fails."""
        try:
            self.conn._check(P.unpack_cr_status_res(call.result()), name)
        except Exception as exc:
            return error or exc
        return error

    # --- host to device ---------------------------------------------------------------------

    def htod(self, dst: int, data: memoryview, stream: int, sync: bool) -> int:
        """Copy ``data`` to ``dst`` through the region; returns how many leading bytes went (the
        rest, if any, is the caller's to send on the socket). A synchronous copy returns once the
        server has copied them; an asynchronous one once they are in the region.

        At most :data:`DEPTH` slots are in flight: the client fills one while the server drains
        the one before, and the few slots in use stay in the CPU cache between the two."""
        total = len(data)
        part = self.part_size(total)
        if sync and total <= part:
            one = self._htod_one(dst, data, stream)
            if one is not None:
                return one
        done = 0
        inflight: collections.deque = collections.deque()    # (slot, reply to wait for or None)
        error: BaseException | None = None
        stall = SYNC_STALL if sync else ASYNC_STALL
        try:
            while done < total:
                slot = self._acquire(0, not sync) if len(inflight) < DEPTH else None
                if slot is None and inflight:
                    slot, call = inflight.popleft()
                    if call is not None:
                        error = self._check(call, "cuMemcpyHtoD", error)
                        if error is not None:
                            self._release(slot)
                            break
                elif slot is None:
                    slot = self._acquire(SLOT_WAIT, not sync)
                    if slot is None:
                        break
                n = min(part, total - done)
                if not self._writable(slot, stall):
                    self._release(slot)
                    break
                at = self.offset(slot)
                self.view[at:at + n] = data[done:done + n]
                if sync:
                    inflight.append((slot, self.rpc.start(PROGRAM, VERSION, PROC_HTOD, [
                        P.pack_cr_shm_htod_args_fixed(dst=dst + done, stream=stream, offset=at, size=n,
                                                      sequence=0)])))
                else:
                    with self._send_lock:
                        self._sequence += 1
                        self._needed[slot] = self._sequence
                        self.rpc.call_batched(PROGRAM, VERSION, PROC_HTOD_ASYNC, [
                            P.pack_cr_shm_htod_args_fixed(dst=dst + done, stream=stream, offset=at, size=n,
                                                          sequence=self._sequence)])
                        self.rpc.flush()                # the server starts on it now
                    inflight.append((slot, None))
                done += n
        finally:
            for slot, call in inflight:
                if call is not None:
                    error = self._check(call, "cuMemcpyHtoD", error)
                self._release(slot)
        if error is not None:
            raise error
        return done

    def _htod_one(self, dst: int, data: memoryview, stream: int) -> int | None:
        """A synchronous copy of one part: one slot, one call whose reply is read inline. Returns
        the bytes copied, 0 when the slot cannot take them (the caller sends them on the socket),
        None when no slot is free now (the general path waits for one)."""
        slot = self._acquire(0)
        if slot is None:
            return None
        n = len(data)
        try:
            if not self._writable(slot, SYNC_STALL):
                return 0
            at = HEADER + slot * self.slot
            self.view[at:at + n] = data
            reply = self.rpc.call(PROGRAM, VERSION, PROC_HTOD, [P.pack_cr_shm_htod_args_fixed(
                dst=dst, stream=stream, offset=at, size=n, sequence=0)])
        finally:
            self._release(slot)
        if reply != STATUS_OK:
            self.conn._check(P.unpack_cr_status_res(reply), "cuMemcpyHtoD")
        return n

    # --- device to host ---------------------------------------------------------------------

    def dtoh(self, dst: memoryview, src: int, stream: int) -> bool:
        """A synchronous device-to-host copy of one part (``len(dst)`` at most
        ``part_size(len(dst))``): one slot, one call whose reply is read inline, the bytes copied
        out. False when no slot is free now (nothing done: the caller takes another path)."""
        n = len(dst)
        slot = self._acquire(0)
        if slot is None:
            return False
        try:
            at = HEADER + slot * self.slot
            reply = self.rpc.call(PROGRAM, VERSION, PROC_DTOH, [P.pack_cr_shm_dtoh_args_fixed(
                src=src, stream=stream, offset=at, size=n)])
            if reply != STATUS_OK:
                self.conn._check(P.unpack_cr_status_res(reply), "cuMemcpyDtoH")
            dst[:] = self.view[at:at + n]
        finally:
            self._release(slot)
        return True

    def start_dtoh(self, dst: memoryview, src: int, stream: int) -> DtohCopy | None:
        """Send the first requests of a device-to-host copy into ``dst`` (at most :data:`DEPTH`
        slots; :meth:`DtohCopy.issue_all` sends the rest); None when no slot is free."""
        part = self.part_size(len(dst))
        slots = self._acquire_many(min(-(-len(dst) // part), DEPTH), part)
        return DtohCopy(self, dst, src, stream, slots) if slots else None

    def _acquire_many(self, want: int, part: int) -> list[int]:
        """Up to ``want`` free slots; fewer when short."""
        slots = []
        while len(slots) < want:
            slot = self._acquire(0)
            if slot is None:
                break
            slots.append(slot)
        return slots


class DtohCopy:
    """A device-to-host copy through the region, requested; :meth:`finish` brings the bytes home.
    Part ``i`` goes through ``slots[i % len(slots)]``; a slot is requested again once copied out."""

    def __init__(self, region: SharedRegion, dst: memoryview, src: int, stream: int,
                 slots: list[int]) -> None:
        self.region = region
        self.dst = dst
        self.src = src
        self.stream = stream
        self.slots = slots
        self.part = region.part_size(len(dst))
        self.chunks = -(-len(dst) // self.part)
        self.calls: collections.deque = collections.deque()
        self.issued = 0
        self.finished = False
        for _ in slots:
            self._issue()

    def issue_all(self) -> bool:
        """Request every remaining part now, each in a slot of its own (for a copy that completes
        later: the device data must be read before later work changes it). False when the region
        has too few free slots; then :meth:`finish` must come at once."""
        if self.issued == len(self.slots):
            more = self.region._acquire_many(self.chunks - len(self.slots), self.part)
            self.slots += more
            while self.issued < len(self.slots):
                self._issue()
        return self.issued == self.chunks

    def _issue(self) -> None:
        r = self.region
        i = self.issued
        off = i * self.part
        n = min(self.part, len(self.dst) - off)
        at = r.offset(self.slots[i % len(self.slots)])
        self.calls.append(r.rpc.start(PROGRAM, VERSION, PROC_DTOH, [
            P.pack_cr_shm_dtoh_args_fixed(src=self.src + off, stream=self.stream, offset=at, size=n)]))
        self.issued += 1

    def finish(self) -> None:
        """Wait for each slot, copy it out, and reuse it for the next part; raises the first error."""
        if self.finished:
            return
        self.finished = True
        r = self.region
        error = None
        try:
            for i in range(self.chunks):
                if not self.calls:
                    break
                error = r._check(self.calls.popleft(), "cuMemcpyDtoH", error)
                if error is not None:
                    continue                   # drain the requests already sent, send no more
                off = i * self.part
                n = min(self.part, len(self.dst) - off)
                at = r.offset(self.slots[i % len(self.slots)])
                self.dst[off:off + n] = r.view[at:at + n]
                if self.issued < self.chunks:
                    self._issue()
        finally:
            for call in self.calls:
                error = r._check(call, "cuMemcpyDtoH", error)
            self.calls.clear()
            for slot in self.slots:
                r._release(slot)
        if error is not None:
            raise error


# --- what the runtime and the Python API call -----------------------------------------------------

def region(conn: Any) -> SharedRegion | None:
    """The connection's shared region, attached at the first call; None when the path is off or
    attaching failed (then the socket path is used for good, after one warning)."""
    state = getattr(conn, "_shm_region", None)
    if state is None:
        with _attach_lock:
            state = getattr(conn, "_shm_region", None)
            if state is None:
                state = conn._shm_region = _attach(conn)
    if state is False or state.pid != os.getpid():
        return None
    return state


def _attach(conn: Any) -> SharedRegion | bool:
    if not enabled():
        log.debug("shared memory is off (CRICKET_SHM=0): copies go over the socket")
        return False
    why = _local_peer(conn._rpc)
    if why is None:
        try:
            size = region_size()
            attached = SharedRegion(conn, size)
            log.info("shared region of %d bytes attached: large copies bypass the socket", size)
            return attached
        except Exception as exc:
            why = str(exc)
    log.warning("no shared memory with the cricket server (%s): large copies go over the socket", why)
    return False


def htod(conn: Any, dst: int, data: memoryview, stream: int, sync: bool) -> int:
    """Bytes of ``data`` (from the start) copied through shared memory: 0 for a small copy or
    without a region; fewer than all when the region was busy."""
    if len(data) < MIN_COPY:
        return 0
    r = region(conn)
    return r.htod(dst, data, stream, sync) if r is not None else 0


def dtoh(conn: Any, dst: memoryview, src: int, stream: int) -> bool:
    """A synchronous device-to-host copy through shared memory when it is one part and a slot is
    free now (True: done); False: nothing done, the caller takes :func:`start_dtoh` or the socket."""
    n = len(dst)
    if n < MIN_COPY:
        return False
    r = region(conn)
    return r is not None and n <= r.part_size(n) and r.dtoh(dst, src, stream)


def start_dtoh(conn: Any, dst: memoryview, src: int, stream: int) -> DtohCopy | None:
    """A device-to-host copy started through shared memory, or None (use the socket)."""
    if len(dst) < MIN_COPY:
        return None
    r = region(conn)
    return r.start_dtoh(dst, src, stream) if r is not None else None
