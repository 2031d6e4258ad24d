"""The blocking RPC client: plain sockets, safe to share between threads.

Pipelining: :meth:`Client.start` sends a call and returns a :class:`PendingCall` at once; many can
be in flight on one connection and their replies are matched by xid, whichever thread reads them.
Batching: :meth:`Client.call_batched` queues a call that expects no reply; queued calls go out with
the next normal call (in the same write) or on :meth:`Client.flush`.
"""
from __future__ import annotations

import errno
import itertools
import logging
import os
import socket
import struct
import threading
import time
from collections.abc import Sequence
from typing import Any

from . import message
from .auth import AuthNone, ClientAuth
from .constants import DEFAULT_MAX_RECORD, RPC_VERSION, MsgType
from .errors import ProtocolError, RecordTooLarge, RpcConnectionError, RpcError, RpcTimeout
from .record import RecordReader, mark
from .transport import Address, connect_socket, parse_address

log = logging.getLogger(__name__)

Buffers = Sequence[bytes | bytearray | memoryview]
_CALL_HEAD = message.CALL_HEAD
_U32 = struct.Struct(">I")
_TIMEVAL = struct.Struct("@ll")
_BATCH_FLUSH = 256 * 1024      # queued batched bytes that force a write
_RECV_SIZE = 256 * 1024


def _nbytes(b: Any) -> int:
    return b.nbytes if isinstance(b, memoryview) else len(b)


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


class Client:
    """A connection to one RPC server; ``call`` returns the result bytes of the reply.

    ``timeout`` (seconds, None = wait forever) bounds the wait for each reply.
    """

    def __init__(self, address: Address, *, timeout: float | None = 25.0,
                 connect_timeout: float | None = 10.0, auth: ClientAuth | None = None,
                 max_record_size: int = DEFAULT_MAX_RECORD) -> None:
        self.address = parse_address(address)
        self.timeout = timeout
        self.auth = auth or AuthNone()
        self._auth_bytes = self.auth.header_bytes()
        try:
            self._sock = connect_socket(self.address, connect_timeout)
        except OSError as exc:
            raise RpcConnectionError(f"could not connect to the RPC server at {self.address}: "
                                     f"{exc.strerror or exc}; is it running?") from exc
        self._rcvtimeo: float | None = None
        self._reader = RecordReader(max_record_size)
        self._rbuf = bytearray(_RECV_SIZE)
        self._xids = itertools.count(first_xid())
        self._send_lock = threading.Lock()
        self._cond = threading.Condition(threading.Lock())
        self._reading = False
        self._waiting: set[int] = set()
        self._replies: dict[int, bytes] = {}
        self._batch: list[Any] = []
        self._batch_bytes = 0
        self._error: RpcError | None = None

    # --- public API -----------------------------------------------------------------------------

    def call(self, prog: int, vers: int, proc: int, buffers: Buffers = ()) -> memoryview:
        """Call a procedure with encoded arguments; returns the encoded result."""
        return self._wait(self._send(prog, vers, proc, buffers, True), self.timeout)

    def start(self, prog: int, vers: int, proc: int, buffers: Buffers = ()) -> PendingCall:
        """Send a call without waiting for its reply (pipelining)."""
        return PendingCall(self, self._send(prog, vers, proc, buffers, True))

    def call_batched(self, prog: int, vers: int, proc: int, buffers: Buffers = ()) -> None:
        """Queue a call that expects no reply; it goes out with the next normal call."""
        self._send(prog, vers, proc, buffers, False)

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
        with self._cond:
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

    def _send(self, prog: int, vers: int, proc: int, buffers: Buffers, wants_reply: bool) -> int:
        if self._error is not None:
            raise self._error
        xid = next(self._xids) & 0xFFFFFFFF
        head = _CALL_HEAD.pack(xid, MsgType.CALL, RPC_VERSION, prog, vers, proc) + self._auth_bytes
        size = len(head)
        for b in buffers:
            size += _nbytes(b)
        pieces = [mark(size), head, *buffers]
        with self._send_lock:
            if not wants_reply:
                self._batch.extend(pieces)
                self._batch_bytes += size + 4
                if self._batch_bytes >= _BATCH_FLUSH:
                    self._write(self._take_batch())
                return xid
            with self._cond:
                self._waiting.add(xid)
            if self._batch:
                pieces = self._take_batch() + pieces
            try:
                self._write(pieces)
            except RpcError:
                with self._cond:
                    self._waiting.discard(xid)
                raise
        return xid

    def _take_batch(self) -> list[Any]:
        batch, self._batch, self._batch_bytes = self._batch, [], 0
        return batch

    def _write(self, pieces: list[Any]) -> None:
        try:
            if len(pieces) > 64:
                self._sock.sendall(b"".join(pieces))
                return
            sent = self._sock.sendmsg(pieces)
            if sent != sum(_nbytes(p) for p in pieces):
                rest = b"".join(bytes(p) for p in pieces)[sent:]
                self._sock.sendall(rest)
        except OSError as exc:
            err = self._fail(RpcConnectionError(
                f"sending to the RPC server at {self.address} failed: {exc.strerror or exc}; "
                "the server has probably gone away"))
            raise err from exc

    # --- receiving ------------------------------------------------------------------------------

    def _wait(self, xid: int, timeout: float | None) -> memoryview:
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
                if not self._reading:
                    self._reading = True
                    break
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    self._waiting.discard(xid)
                    raise self._timeout(timeout)
                cond.wait(remaining)
        try:
            record = self._read_until(xid, deadline, timeout)
        finally:
            with cond:
                self._reading = False
                cond.notify_all()
        return self._result(record)

    def _read_until(self, xid: int, deadline: float | None, timeout: float | None) -> bytes:
        """Read records (as the one reading thread) until the reply to ``xid`` arrives."""
        sock = self._sock
        rbuf = self._rbuf
        while True:
            self._set_rcvtimeo(deadline)
            try:
                n = sock.recv_into(rbuf)
            except (BlockingIOError, socket.timeout):
                if deadline is not None and time.monotonic() >= deadline:
                    with self._cond:
                        self._waiting.discard(xid)
                    raise self._timeout(timeout) from None
                continue
            except InterruptedError:
                continue
            except OSError as exc:
                if exc.errno == errno.EAGAIN:
                    continue
                raise self._fail(RpcConnectionError(
                    f"reading from the RPC server at {self.address} failed: {exc.strerror or exc}"
                )) from exc
            if n == 0:
                with self._cond:
                    pending = len(self._waiting)
                raise self._fail(RpcConnectionError(
                    f"the RPC server at {self.address} closed the connection with {pending} "
                    "call(s) waiting for a reply; the server has gone away or dropped this client"))
            try:
                records = self._reader.feed(memoryview(rbuf)[:n])
            except RecordTooLarge as exc:
                raise self._fail(exc) from None
            mine = None
            for record in records:
                try:
                    rxid = message.reply_xid(record)
                except ProtocolError as exc:
                    raise self._fail(exc) from None
                if rxid == xid:
                    mine = record
                    continue
                with self._cond:
                    if rxid in self._waiting:
                        self._replies[rxid] = record
                        self._cond.notify_all()
                    else:
                        log.debug("dropping a reply to xid %#x that nobody waits for", rxid)
            if mine is not None:
                with self._cond:
                    self._waiting.discard(xid)
                return mine

    def _set_rcvtimeo(self, deadline: float | None) -> None:
        # A kernel receive timeout keeps a blocking recv to one system call (no poll first).
        want = None if deadline is None else max(deadline - time.monotonic(), 0.001)
        have = self._rcvtimeo
        if want == have or (want is not None and have is not None and want / 2 <= have <= want):
            return
        if want is None:
            tv = _TIMEVAL.pack(0, 0)
        else:
            sec = int(want)
            tv = _TIMEVAL.pack(sec, max(int((want - sec) * 1e6), 1 if sec == 0 else 0))
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, tv)
        self._rcvtimeo = want

    def _result(self, record: bytes) -> memoryview:
        offset = message.decode_reply(record)
        return memoryview(record)[offset:]

    def _timeout(self, timeout: float | None) -> RpcTimeout:
        return RpcTimeout(f"no reply from the RPC server at {self.address} within {timeout} s; "
                          "raise the client's timeout if the call is expected to take longer")

    def _fail(self, error: RpcError) -> RpcError:
        with self._cond:
            if self._error is None:
                self._error = error
            self._cond.notify_all()
        return error
