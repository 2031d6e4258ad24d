"""The blocking RPC call: send one call, wait for its reply, read it, check its header.

Pure-Python twin of ``cricket._cext.rpc_call`` (``cext/rpc_call.pyx``, interface in
``cricket/_cext/rpc_call.pxd``), which does the same in C for plain sockets; chosen by
``cricket._select.load`` (``CRICKET_PUREPYTHON=1`` takes this one). TLS sockets always take this
one: it uses only the socket methods a TLS socket has too. The rare paths (a send that does not
fit the socket, replies for other threads, errors) call back into the client
(``cricket/rpc/client.py``), so each is written once.
"""
from __future__ import annotations

import errno
import socket
import struct
import time
import weakref
from typing import Any

from . import socket_poll
from .constants import LAST_FRAGMENT, MAX_FRAGMENT
from .errors import RecordTooLarge, RpcConnectionError, RpcError

MARKED_HEAD = struct.Struct(">7I")     # record mark, xid, CALL, rpcvers 2, prog, vers, proc
SUCCESS_NONE_TAIL = b"\0\0\0\1" + b"\0" * 16   # a reply's bytes 4-24: accepted, AUTH_NONE, SUCCESS
# A peer that went away makes a send fail with EPIPE instead of raising SIGPIPE, which would kill
# a program that embeds the client with the default SIGPIPE action (native CUDA programs).
NOWAIT = getattr(socket, "MSG_NOSIGNAL", 0) | socket.MSG_DONTWAIT
IOV_MAX = 64            # pieces per gathering write (Linux allows 1024; a few suffice)
DIRECT_RECV = 64 * 1024     # a reply with at least this much still to come is received in place


def _nbytes(b: Any) -> int:
    return b.nbytes if isinstance(b, memoryview) else len(b)


class CallPath:
    """The blocking call of one :class:`cricket.rpc.Client`: taken when no other thread reads the
    client's socket; this thread then holds the client's reader role until the reply is in.

    ``reader`` is the client's record reader, ``rbuf`` its receive buffer, ``auth`` the credential
    and verifier every call carries; ``plain``: replies carry no verifier to check; ``spin`` and
    ``yield_cpu``: the polling window before a thread sleeps in the read (see
    :meth:`cricket.rpc.Client.set_polling`), public and changeable. ``reading`` (the reader role:
    one thread reads the socket at a time) and ``sleepers`` (threads asleep on the client's
    condition) are the client's, guarded by its ``_lock``; its ``_send_lock`` and xid counter are
    shared too.
    """

    def __init__(self, client: Any, sock: Any, reader: Any, rbuf: bytearray, auth: bytes,
                 plain: bool, spin: float, yield_cpu: bool) -> None:
        self._client_ref = weakref.ref(client)    # no cycle: a dropped client closes its socket
        self._sock = sock
        self._reader = reader
        self._rbuf = memoryview(rbuf)
        self._auth = auth
        self._head_size = 24 + len(auth)
        self._send_lock = client._send_lock
        self._lock = client._lock
        self._xids = client._xids
        self._peek = bytearray(1)
        self.plain = plain
        self.spin = spin
        self.yield_cpu = yield_cpu
        self.reading = False      # a thread reads the socket (the client's reader role)
        self.sleepers = 0         # threads asleep on the client's condition, waiting for a reply

    def _owner(self) -> Any:
        """The client (held weakly)."""
        client = self._client_ref()
        if client is None:
            raise RpcConnectionError("the RPC client this call path served is gone")
        return client

    def call(self, prog: int, vers: int, proc: int, buffers: Any) -> memoryview | None:
        """Send a call with its encoded arguments ``buffers`` and return its result bytes once
        the reply has come (within the client's timeout). None when another thread reads the
        socket or the call has too many pieces for one gathering write: nothing was sent, and
        the client's general path takes it. Replies to other threads' calls that come first are
        handed over."""
        if len(buffers) >= IOV_MAX:
            return None
        client = self._owner()
        with self._lock:
            if self.reading:
                return None
            self.reading = True
        try:
            timeout = client._timeout_s
            if client._rcvtimeo != timeout:
                client._set_rcvtimeo(timeout)
            return self._exchange(next(self._xids) & 0xFFFFFFFF, prog, vers, proc, buffers,
                                  -1.0 if timeout is None else timeout)
        finally:
            with self._lock:
                self.reading = False
                if self.sleepers:
                    client._cond.notify_all()

    def _exchange(self, xid: int, prog: int, vers: int, proc: int, buffers: Any,
                  timeout: float) -> memoryview:
        """Send the call, then receive its reply (this thread holds the reader role)."""
        size = self._head_size
        for b in buffers:
            size += _nbytes(b)
        if size > MAX_FRAGMENT:
            raise RpcError(f"a call of {size} bytes does not fit one record fragment")
        pieces = [MARKED_HEAD.pack(LAST_FRAGMENT | size, xid, 0, 2, prog, vers, proc) + self._auth,
                  *buffers]
        with self._send_lock:
            try:
                sent = self._sock.sendmsg(pieces, (), NOWAIT)
            except (BlockingIOError, InterruptedError):
                sent = 0
            except OSError as exc:
                raise self._owner()._send_failed(exc) from exc
            if sent != size + 4:
                # The socket is full: the client sends the rest as it drains, reading meanwhile.
                self._owner()._write_rest(pieces, sent, True)
        return self.receive(xid, timeout)

    def receive(self, xid: int, timeout: float) -> memoryview:
        """Read records until the reply to ``xid`` has come (``timeout`` seconds at most,
        negative: no limit); return its result bytes. The caller holds the reader role."""
        client = self._owner()
        sock = self._sock
        rbuf = self._rbuf
        reader = self._reader
        xid_bytes = xid.to_bytes(4, "big")
        deadline = time.monotonic() + timeout if timeout >= 0 else None
        first = True
        while True:
            if self.spin and (first or reader.in_record):
                # Also for the rest of a record that came in part: it is on its way.
                socket_poll.wait_readable(sock, self._peek, self.spin, self.yield_cpu)
            first = False
            window = reader.writable()
            if window is not None and len(window) < DIRECT_RECV:
                window = None
            try:
                n = sock.recv_into(rbuf if window is None else window)
            except (BlockingIOError, socket.timeout, InterruptedError):
                n = -1
            except OSError as exc:
                if exc.errno != errno.EAGAIN:
                    raise client._read_failed(exc) from exc
                n = -1
            if n == 0:
                client._lost()
            if n > 0:
                if window is not None:
                    records = reader.advance(n)
                else:
                    if (n >= 28 and self.plain and not reader.in_record
                            and int.from_bytes(rbuf[:4], "big") == LAST_FRAGMENT | (n - 4)
                            and n - 4 <= reader.max_record_size and rbuf[4:8] == xid_bytes
                            and rbuf[8:28] == SUCCESS_NONE_TAIL):
                        return memoryview(bytes(rbuf[28:n]))    # exactly our reply, SUCCESS
                    try:
                        records = reader.feed(rbuf[:n])
                    except RecordTooLarge as exc:
                        raise client._fail(exc) from None
                if records:
                    rec = records[0]
                    if not (len(records) == 1 and rec[:4] == xid_bytes):
                        rec = client._hand_over(records, xid)
                    if rec is not None:
                        return self._result(rec)
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise client._timeout(timeout)
                if remaining < client._rcvtimeo:
                    client._set_rcvtimeo(remaining)

    def _result(self, record: bytes) -> memoryview:
        if self.plain and record[4:24] == SUCCESS_NONE_TAIL:
            return memoryview(record)[24:]
        return self._owner()._result(record)
