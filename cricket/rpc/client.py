"""The blocking RPC client: plain sockets, safe to share between threads.

Pipelining: :meth:`Client.start` sends a call and returns a :class:`PendingCall` at once; many can
be in flight on one connection and their replies are matched by xid, whichever thread reads them
(one thread at a time reads the socket and hands other threads' replies over).
Batching: :meth:`Client.call_batched` queues a call that expects no reply; queued calls go out with
the next normal call (in the same write) or on :meth:`Client.flush`.
"""
from __future__ import annotations

import itertools
import logging
import os
import select
import socket
import struct
import threading
import time
from collections.abc import Sequence
from typing import Any

from cricket._select import load

from . import message, rpc_call
from .._env import MAX_POLL_US, poll_us
from .auth import AuthNone, ClientAuth
from .constants import DEFAULT_MAX_RECORD, LAST_FRAGMENT, MAX_FRAGMENT
from .errors import ProtocolError, RecordTooLarge, RpcConnectionError, RpcError, RpcTimeout
from .heap import keep_large_buffers
from .record import RecordReader
from .rpc_call import IOV_MAX as _IOV_MAX, MARKED_HEAD as _MARKED_HEAD, NOWAIT as _NOWAIT
from .rpc_call import SUCCESS_NONE_TAIL as _SUCCESS_NONE_TAIL
from .sink import ReplySink
from .transport import Address, connect_socket, parse_address

log = logging.getLogger(__name__)

# The wait for a reply: polled in C without the GIL, or its pure-Python twin.
wait_readable = load("cricket._cext.socket_poll", "cricket.rpc.socket_poll").wait_readable
# The whole blocking call (send, wait, read, check) in C for plain sockets, or its twin; TLS
# sockets always take the twin.
CallPath = load("cricket._cext.rpc_call", "cricket.rpc.rpc_call").CallPath

Buffers = Sequence[bytes | bytearray | memoryview]
_TIMEVAL = struct.Struct("@ll")
_BATCH_FLUSH = 256 * 1024      # queued batched bytes that force a write
_RECV_SIZE = 256 * 1024


def _nbytes(b: Any) -> int:
    return b.nbytes if isinstance(b, memoryview) else len(b)


def verifier_check(auth: ClientAuth):
    """``auth.check_verifier`` when the flavor overrides it, else None (nothing to check)."""
    if type(auth).check_verifier is ClientAuth.check_verifier:
        return None
    return auth.check_verifier


DEFAULT_SPIN_US = 100.0     # polling window when CRICKET_SPIN_US is not set


def spin_seconds() -> float:
    """How long a thread waiting for a reply polls the socket before it sleeps: ``CRICKET_SPIN_US``
    microseconds, default 100 (0 turns polling off).

    A reply that comes within the window is read without the sleep and wake-up of a blocking
    read, which on a machine with idle CPUs (a virtual machine above all) cost more than the call
    itself: a 4 KiB cudaMemcpy ~90 → ~45 µs on the 2-core test box. The polling thread yields
    its CPU between polls (see :meth:`Client.spin_until_readable`), so on a busy machine it does
    not slow the server it waits for, and a yield that comes back late (another process ran for a
    time slice) stops polling for a while (``cricket.rpc.contention``).
    The CUDA runtime's cudaSetDeviceFlags schedule chooses between yielding, spinning and
    blocking, as it does for waits on a GPU."""
    us, complaint = poll_us("CRICKET_SPIN_US", DEFAULT_SPIN_US)
    if complaint:
        log.warning("%s", complaint)
    return us / 1e6


def first_xid() -> int:
    """A starting xid that differs between processes and runs (RFC 5531 §9 asks for uniqueness)."""
    return int.from_bytes(os.urandom(4), "big") & 0x7FFFFFFF


class PendingCall:
    """A call whose reply has not been collected yet (see :meth:`Client.start`)."""

    __slots__ = ("client", "xid")

    def __init__(self, client: Client, xid: int) -> None:
        self.client = client
        self.xid = xid

    def result(self, timeout: float | None = -1.0) -> memoryview:
        """Wait for the reply and return its result bytes (raises the reply's error)."""
        return self.client._wait(self.xid, self.client.timeout if timeout == -1.0 else timeout)

    def result_into(self, sink: ReplySink) -> memoryview | None:
        """Wait for the reply, its result received into ``sink`` when it has the sink's shape
        (then None); else its result bytes, as :meth:`result` (see :meth:`Client.result_into`)."""
        return self.client.result_into(self.xid, sink)


class Client:
    """A connection to one RPC server; ``call`` returns the result bytes of the reply.

    ``timeout`` (seconds, None = wait forever) bounds the wait for each reply.
    """

    def __init__(self, address: Address, *, timeout: float | None = 25.0,
                 connect_timeout: float | None = 10.0, auth: ClientAuth | None = None,
                 max_record_size: int = DEFAULT_MAX_RECORD, tls: Any = None) -> None:
        keep_large_buffers()
        self.address = parse_address(address)
        self._timeout_s = timeout
        self.auth = auth or AuthNone()
        self._auth_bytes = self.auth.header_bytes()
        self._check_verifier = verifier_check(self.auth)
        self._head_size = 24 + len(self._auth_bytes)
        self._bare_mark = LAST_FRAGMENT | self._head_size      # record mark of a call with no args
        try:
            self._sock = connect_socket(self.address, connect_timeout)
        except OSError as exc:
            raise RpcConnectionError(f"could not connect to the RPC server at {self.address}: "
                                     f"{exc.strerror or exc}; is it running?") from exc
        # tls: a cricket.rpc.tls.ClientTls; RFC 9289 probe and handshake, then TLS on this socket
        self.encrypted = tls is not None
        if tls is not None:
            self._sock = tls.wrap(self._sock, self.address, connect_timeout)
        self._rcvtimeo: float | None = None
        self._set_sndtimeo(timeout)
        self._reader = RecordReader(max_record_size)
        rbuf = bytearray(_RECV_SIZE)
        self._rbuf = memoryview(rbuf)
        self._xids = itertools.count(first_xid())
        self._send_lock = threading.Lock()
        self._lock = threading.Lock()                 # guards the fields below
        self._cond = threading.Condition(self._lock)  # threads waiting for a reply sleep here
        self._waiting: set[int] = set()
        self._replies: dict[int, bytes] = {}
        self._batch: list[Any] = []
        self._batch_bytes = 0
        self._error: RpcError | None = None
        self._spin = spin_seconds()
        self._spin_yields = True          # give the CPU away between polls (see set_polling)
        self._peek = bytearray(1)
        # The call path also holds the reader role (``reading``: one thread reads the socket at
        # a time) and counts the threads asleep on _cond (``sleepers``), both guarded by _lock.
        path = CallPath if type(self._sock) is socket.socket else rpc_call.CallPath
        self._path = path(self, self._sock, self._reader, rbuf, self._auth_bytes,
                          self._check_verifier is None, self._spin, self._spin_yields)

    # --- public API -----------------------------------------------------------------------------

    @property
    def timeout(self) -> float | None:
        """Seconds to wait for each reply (and for a blocked send), None to wait forever."""
        return self._timeout_s

    @timeout.setter
    def timeout(self, value: float | None) -> None:
        self._timeout_s = value
        self._set_sndtimeo(value)

    def call(self, prog: int, vers: int, proc: int, buffers: Buffers = ()) -> memoryview:
        """Call a procedure with encoded arguments; returns the encoded result."""
        if not self._batch and self._error is None:
            # Nothing queued to go first: unless another thread reads the socket, this thread
            # becomes the reader and the call path does the rest (in C on a plain socket).
            result = self._path.call(prog, vers, proc, buffers)
            if result is not None:
                return result
        xid = self._send(prog, vers, proc, buffers, True)[0]
        return self._wait(xid, self._timeout_s)

    def start(self, prog: int, vers: int, proc: int, buffers: Buffers = ()) -> PendingCall:
        """Send a call without waiting for its reply (pipelining)."""
        return PendingCall(self, self._send(prog, vers, proc, buffers, True)[0])

    def call_batched(self, prog: int, vers: int, proc: int, buffers: Buffers = ()) -> None:
        """Queue a call that expects no reply; it goes out with the next normal call."""
        self._send(prog, vers, proc, buffers, False)

    def call_head(self, prog: int, vers: int, proc: int) -> bytes:
        """The record mark, xid, call header and credentials of a call to ``proc``, with the mark
        and xid left zero: the start of a record built whole for :meth:`queue_batched`."""
        return _MARKED_HEAD.pack(0, 0, 0, 2, prog, vers, proc) + self._auth_bytes

    def next_xid(self) -> int:
        return next(self._xids) & 0xFFFFFFFF

    def queue_batched(self, record: bytes) -> None:
        """Queue a whole call record that expects no reply (a :meth:`call_head` with its record
        mark and an xid from :meth:`next_xid` filled in, then the arguments); like
        :meth:`call_batched` without building the header (the launch path's)."""
        if self._error is not None:
            raise self._error
        with self._send_lock:
            self._batch.append(record)
            self._batch_bytes += len(record)
            if self._batch_bytes >= _BATCH_FLUSH:
                self._write(self._take_batch())

    def null(self, prog: int, vers: int) -> None:
        """Call procedure 0 (NULL), the standard ping."""
        self.call(prog, vers, 0)

    def flush(self) -> None:
        """Send queued batched calls now."""
        with self._send_lock:
            if self._batch:
                self._write(self._take_batch())

    def close(self) -> None:
        try:
            self.flush()
        except RpcError:
            pass
        with self._lock:
            if self._error is None:
                self._error = RpcConnectionError("the client was closed")
            self._cond.notify_all()
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._sock.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- sending --------------------------------------------------------------------------------

    def _send(self, prog: int, vers: int, proc: int, buffers: Buffers,
              wants_reply: bool) -> tuple[int, bytes]:
        if self._error is not None:
            raise self._error
        xid = next(self._xids) & 0xFFFFFFFF
        size = self._head_size
        for b in buffers:
            size += _nbytes(b)
        if size > MAX_FRAGMENT:
            raise RpcError(f"a call of {size} bytes does not fit one record fragment")
        head = _MARKED_HEAD.pack(LAST_FRAGMENT | size, xid, 0, 2, prog, vers, proc) \
            + self._auth_bytes
        with self._send_lock:
            if not wants_reply:
                self._batch.append(head)
                self._batch += buffers
                self._batch_bytes += size + 4
                if self._batch_bytes >= _BATCH_FLUSH:
                    self._write(self._take_batch())
                return xid, head
            # Registered before the call leaves, so whichever thread reads the reply keeps it.
            # (set.add is atomic; readers only test membership.)
            self._waiting.add(xid)
            total = size + 4
            if self._batch:
                total += self._batch_bytes
                pieces = self._take_batch()
                pieces.append(head)
                pieces += buffers
            else:
                pieces = [head, *buffers]
            try:
                self._write(pieces, total)
            except RpcError:
                with self._lock:
                    self._waiting.discard(xid)
                raise
        return xid, head

    def _take_batch(self) -> list[Any]:
        batch, self._batch, self._batch_bytes = self._batch, [], 0
        return batch

    def _write(self, pieces: list[Any], total: int = -1) -> None:
        """Send ``pieces`` (``total`` bytes, -1: count them) in as few system calls as possible
        (a gathering write)."""
        if len(pieces) > _IOV_MAX:
            pieces = [b"".join(pieces)]
        try:
            sent = self._sock.sendmsg(pieces, (), _NOWAIT)
        except (BlockingIOError, InterruptedError):
            sent = 0
        except OSError as exc:
            raise self._send_failed(exc) from exc
        if total < 0:
            total = 0
            for p in pieces:
                total += _nbytes(p)
        if sent != total:
            self._write_rest(pieces, sent)

    def _write_rest(self, pieces: list[Any], sent: int, reader_held: bool = False) -> None:
        """The socket is full: send the rest of ``pieces`` (``sent`` bytes are gone) as it drains,
        and meanwhile read the replies that have arrived.

        A server stops reading a connection while its replies pile up unread (the RPC server does,
        past 64 KiB), and a client that only sends while the replies to its earlier pipelined calls
        wait (an asynchronous device-to-host copy, then a large host-to-device one) would wait for
        the server while the server waits for it. Reading while blocked breaks that cycle: the
        replies are kept for the threads that wait for them. Without progress either way for the
        client's timeout, the connection fails. ``reader_held``: the calling thread holds the
        reader role already (the call path's) and keeps it.
        """
        rest = []
        for piece in pieces:                    # what is left, as views (no joining, no copy)
            n = _nbytes(piece)
            if sent >= n:
                sent -= n
                continue
            view = memoryview(piece).cast("B")
            rest.append(view[sent:] if sent else view)
            sent = 0
        sock = self._sock
        poller = select.poll()
        fd = sock.fileno()
        timeout = self.timeout
        deadline = None if timeout is None else time.monotonic() + timeout
        while rest:
            reading = taken = False
            if reader_held:
                reading = self._error is None
            else:
                with self._lock:
                    if not self._path.reading and self._error is None:
                        self._path.reading = reading = taken = True
            try:
                poller.register(fd, select.POLLOUT | (select.POLLIN if reading else 0))
                wait_ms = 50 if deadline is None else max(0, min(50, int((deadline - time.monotonic()) * 1000)))
                events = poller.poll(wait_ms)
                progress = False
                if events and events[0][1] & (select.POLLIN | select.POLLHUP | select.POLLERR) and reading:
                    progress = self._read_available()
                if events and events[0][1] & (select.POLLOUT | select.POLLERR):
                    try:
                        n = sock.sendmsg(rest[:_IOV_MAX], (), _NOWAIT)
                    except (BlockingIOError, InterruptedError):
                        n = 0
                    except OSError as exc:
                        raise self._send_failed(exc) from exc
                    if n:
                        progress = True
                        while n:
                            head = rest[0]
                            if n >= len(head):
                                n -= len(head)
                                rest.pop(0)
                            else:
                                rest[0] = head[n:]
                                n = 0
            finally:
                if taken:
                    with self._lock:
                        self._path.reading = False
                        if self._path.sleepers:
                            self._cond.notify_all()
            if progress:
                deadline = None if timeout is None else time.monotonic() + timeout
            elif deadline is not None and time.monotonic() >= deadline:
                raise self._send_failed(socket.timeout())

    def _read_available(self) -> bool:
        """Read what the socket holds now, without blocking (the caller holds the reader role);
        complete replies go to the threads waiting for them. True when bytes came."""
        got = False
        while True:
            try:
                n = self._sock.recv_into(self._rbuf, 0, socket.MSG_DONTWAIT)
            except (BlockingIOError, InterruptedError):
                return got
            except OSError as exc:
                raise self._read_failed(exc) from exc
            if n == 0:
                self._lost()
            got = True
            try:
                records = self._reader.feed(self._rbuf[:n])
            except RecordTooLarge as exc:
                raise self._fail(exc) from None
            if records:
                self._hand_over(records, -1)

    # --- receiving ------------------------------------------------------------------------------

    def _wait(self, xid: int, timeout: float | None) -> memoryview:
        """Wait for the reply to ``xid``: take it if another thread read it, else read."""
        deadline = None if timeout is None else time.monotonic() + timeout
        cond = self._cond
        with cond:
            while True:
                record = self._replies.pop(xid, None)
                if record is not None:
                    self._waiting.discard(xid)
                    return self._result(record)
                if self._error is not None:
                    self._waiting.discard(xid)
                    raise self._error
                if xid not in self._waiting:
                    raise RpcError(f"no call with xid {xid:#x} is waiting for a reply")
                if not self._path.reading:
                    self._path.reading = True
                    break
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    self._waiting.discard(xid)
                    raise self._timeout(timeout)
                self._path.sleepers += 1
                try:
                    cond.wait(remaining)
                finally:
                    self._path.sleepers -= 1
        try:
            remaining = None if deadline is None else max(deadline - time.monotonic(), 0.0)
            if self._rcvtimeo != remaining:
                self._set_rcvtimeo(remaining)
            return self._path.receive(xid, -1.0 if remaining is None else remaining)
        finally:
            with cond:
                self._path.reading = False
                self._waiting.discard(xid)
                if self._path.sleepers:
                    cond.notify_all()

    def set_polling(self, seconds: float, yield_cpu: bool = True) -> None:
        """Poll the socket for up to ``seconds`` before a thread waiting for a reply sleeps (0:
        sleep at once), yielding the CPU between polls or not (pure spinning)."""
        self._spin = min(max(float(seconds), 0.0), MAX_POLL_US / 1e6)
        self._spin_yields = bool(yield_cpu)
        self._path.spin = self._spin
        self._path.yield_cpu = self._spin_yields

    def spin_until_readable(self) -> None:
        """Poll the socket (without sleeping) for up to the polling window, or until bytes or the
        end of the stream are there; the read that follows reports whatever it finds. A reply
        that comes meanwhile is read without the sleep and wake-up of a blocking read. Between
        polls the thread yields its CPU (sched_yield), unless pure spinning was asked for: on a
        busy machine the server, or whatever else is runnable, then gets the CPU first
        (``socket_poll``; the compiled one polls without holding the GIL)."""
        wait_readable(self._sock, self._peek, self._spin, self._spin_yields)

    # --- receiving into a reply sink ------------------------------------------------------------

    def result_into(self, xid: int, sink: ReplySink) -> memoryview | None:
        """Collect the reply to ``xid`` (a call from :meth:`start`) with its result received straight
        into ``sink`` (:class:`cricket.rpc.sink.ReplySink`): None when the reply succeeded and its
        result was ``sink.head`` then ``len(sink.view)`` bytes, which are now in the view. Otherwise
        the result bytes, as :meth:`PendingCall.result` returns them: a reply of another shape (an
        error result), one another thread had already read, or any reply when another thread is
        reading or the auth flavor checks verifiers.

        The calling thread becomes the reader and reads the record mark and the reply's head with
        exact-sized reads, then ``recv_into`` the view: the kernel copies the bytes where the caller
        wants them and nothing else touches them. Replies to other calls that come first are read
        whole and handed over. A failure in the middle of a record fails the connection."""
        if self._check_verifier is not None:
            return self._wait(xid, self.timeout)
        with self._lock:
            lead = not (self._path.reading or xid in self._replies or self._reader.in_record
                        or self._error is not None)
            if lead:
                self._path.reading = True
        if not lead:
            return self._wait(xid, self.timeout)
        n = len(sink.view)
        pad = -n % 4
        head_size = 24 + len(sink.head)        # reply header with AUTH_NONE, then the result's head
        if self._spin:
            self.spin_until_readable()
        try:
            if self._rcvtimeo != self.timeout:
                self._set_rcvtimeo(self.timeout)
            while True:
                mark = int.from_bytes(self._exact(4, False), "big")
                length = mark & ~LAST_FRAGMENT
                head = self._exact(min(length, head_size), True)    # never past this record
                rxid = int.from_bytes(head[:4], "big") if len(head) >= 4 else -1
                if (rxid == xid and mark & LAST_FRAGMENT and length == head_size + n + pad
                        and head[4:24] == _SUCCESS_NONE_TAIL and head[24:] == sink.head):
                    self._recv_exact(sink.view, True)
                    if pad:
                        self._exact(pad, True)
                    return None
                record = self._rest_of_record(mark, head)
                if rxid == xid:
                    return self._result(record)
                self._hand_over([record], xid)
        finally:
            with self._lock:
                self._path.reading = False
                self._waiting.discard(xid)
                if self._path.sleepers:
                    self._cond.notify_all()

    def _recv_exact(self, view: memoryview, mid_record: bool) -> None:
        """Fill ``view`` from the socket (the caller holds the reader role); ``mid_record``: bytes
        of this record were read already, so a timeout loses the stream position."""
        sock = self._sock
        got, want = 0, len(view)
        while got < want:
            if got and self._spin:
                # The rest is on its way (the server is still writing): poll for it rather than
                # sleep in the read and be woken for each piece.
                self.spin_until_readable()
            try:
                n = sock.recv_into(view[got:] if got else view)
            except InterruptedError:
                continue
            except (BlockingIOError, socket.timeout) as exc:
                err = self._timeout(self.timeout)
                if mid_record or got:
                    raise self._fail(err) from exc
                raise err from exc
            except OSError as exc:
                raise self._read_failed(exc) from exc
            if n == 0:
                self._lost()
            got += n

    def _exact(self, size: int, mid_record: bool) -> bytearray:
        buf = bytearray(size)
        if size:
            self._recv_exact(memoryview(buf), mid_record)
        return buf

    def _rest_of_record(self, mark: int, have: bytes) -> bytes:
        """The record whose first fragment's mark is ``mark`` and whose first bytes are ``have``."""
        limit = self._reader.max_record_size
        size = mark & ~LAST_FRAGMENT
        parts = [bytes(have), bytes(self._exact(size - len(have), True))]
        while not mark & LAST_FRAGMENT:
            mark = int.from_bytes(self._exact(4, True), "big")
            size += mark & ~LAST_FRAGMENT
            if size > limit:
                raise self._fail(RecordTooLarge(size, limit))
            parts.append(bytes(self._exact(mark & ~LAST_FRAGMENT, True)))
        return b"".join(parts)

    def _lost(self) -> None:
        raise self._fail(RpcConnectionError(
            f"the RPC server at {self.address} closed the connection with "
            f"{len(self._waiting)} call(s) waiting for a reply; the server has gone away "
            "or dropped this client"))

    def _hand_over(self, records: list[bytes], xid: int) -> bytes | None:
        """Keep other threads' replies for them; return the one for ``xid`` if present."""
        mine = None
        for record in records:
            try:
                rxid = message.reply_xid(record)
            except ProtocolError as exc:
                raise self._fail(exc) from None
            if rxid == xid:
                mine = record
                continue
            with self._lock:
                if rxid in self._waiting:
                    self._replies[rxid] = record
                    if self._path.sleepers:
                        self._cond.notify_all()
                else:
                    log.debug("dropping a reply to xid %#x that nobody waits for", rxid)
        return mine

    @staticmethod
    def _timeval(timeout: float | None) -> bytes:
        if timeout is None:
            return _TIMEVAL.pack(0, 0)
        timeout = max(timeout, 0.001)
        sec = int(timeout)
        return _TIMEVAL.pack(sec, max(int((timeout - sec) * 1e6), 0))

    def _set_rcvtimeo(self, timeout: float | None) -> None:
        # A kernel receive timeout keeps a blocking recv to one system call (no poll first);
        # it is changed only when the timeout changes, not per call.
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, self._timeval(timeout))
        self._rcvtimeo = timeout

    def _set_sndtimeo(self, timeout: float | None) -> None:
        # A send that cannot proceed (the server stopped reading, e.g. because nobody collects
        # its replies) fails after the timeout instead of blocking forever.
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, self._timeval(timeout))

    def _send_failed(self, exc: OSError) -> RpcError:
        if isinstance(exc, (BlockingIOError, socket.timeout)):
            return self._fail(RpcTimeout(
                f"could not send to the RPC server at {self.address} within {self.timeout} s: it "
                "stopped reading (too many calls in flight whose replies nobody collects?); "
                "the connection is closed"))
        return self._fail(RpcConnectionError(
            f"sending to the RPC server at {self.address} failed: {exc.strerror or exc}; "
            "the server has probably gone away"))

    def _read_failed(self, exc: OSError) -> RpcError:
        return self._fail(RpcConnectionError(f"reading from the RPC server at {self.address} failed: "
                                             f"{exc.strerror or exc}"))

    def _result(self, record: bytes) -> memoryview:
        return memoryview(record)[message.decode_reply(record, self._check_verifier):]

    def _timeout(self, timeout: float | None) -> RpcTimeout:
        return RpcTimeout(f"no reply from the RPC server at {self.address} within {timeout} s; "
                          "raise the client's timeout if the call is expected to take longer")

    def _fail(self, error: RpcError) -> RpcError:
        with self._lock:
            if self._error is None:
                self._error = error
            self._cond.notify_all()
        return error
