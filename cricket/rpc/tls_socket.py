"""A TLS session over a connected blocking socket, with the socket methods the blocking RPC client
uses (gathering ``sendmsg`` with ``MSG_DONTWAIT``, ``recv_into`` with flags and ``MSG_PEEK``, socket
options and the file descriptor for ``poll``).

:class:`ssl.SSLSocket` offers neither ``sendmsg`` nor flags on ``recv_into``, so the session runs on
an :class:`ssl.SSLObject` over memory buffers and this class moves the ciphertext itself: the
client keeps its non-blocking writes (reading replies while a large call drains) and its polling
reads over TLS unchanged.
"""
from __future__ import annotations

import errno
import socket
import ssl
import threading
import time
from typing import Any

_RAW_READ = 256 * 1024      # ciphertext read per system call
_CHUNK = 256 * 1024         # plaintext encrypted before its ciphertext is sent
_JOIN = 16 * 1024           # calls up to this size go out as one TLS record
_PEEK = socket.MSG_PEEK
_DONTWAIT = socket.MSG_DONTWAIT


def _nbytes(b: Any) -> int:
    return b.nbytes if isinstance(b, memoryview) else len(b)


class TlsSocket:
    """The client end of a TLS session on ``sock`` (connected, blocking); the handshake runs in
    the constructor and raises :class:`ssl.SSLError` (or ``OSError``) when it fails.

    A send that the socket takes only in part keeps the ciphertext of the chunk it was in and
    reports the bytes before that chunk as sent; the caller sends the rest again (as after any
    short write) and the kept ciphertext goes first, so nothing is encrypted twice.
    Encryption and decryption are serialised by a lock (one thread sends while another reads).
    """

    def __init__(self, sock: socket.socket, context: ssl.SSLContext, server_hostname: str | None,
                 timeout: float | None) -> None:
        self._raw = sock
        self._in = ssl.MemoryBIO()
        self._out = ssl.MemoryBIO()
        self.ssl_object = context.wrap_bio(self._in, self._out, server_side=False,
                                           server_hostname=server_hostname)
        self._lock = threading.Lock()
        self._rawbuf = memoryview(bytearray(_RAW_READ))
        self._pending: memoryview | None = None     # ciphertext of a chunk not all sent yet
        self._pending_plain = 0                     # the plaintext bytes of that chunk
        self._handshake(timeout)

    def _handshake(self, timeout: float | None) -> None:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            try:
                self.ssl_object.do_handshake()
                break
            except ssl.SSLWantReadError:
                self._flush_blocking()
                if deadline is not None:
                    self._raw.settimeout(max(deadline - time.monotonic(), 0.001))
                n = self._raw.recv_into(self._rawbuf)
                if n == 0:
                    raise ConnectionResetError("the server closed the connection during the TLS handshake")
                self._in.write(self._rawbuf[:n])
        self._flush_blocking()
        self._raw.settimeout(None)

    def _flush_blocking(self) -> None:
        data = self._out.read()
        if data:
            self._raw.sendall(data)

    # --- the socket methods the client uses --------------------------------------------------------

    def sendmsg(self, buffers: Any, ancdata: Any = (), flags: int = 0) -> int:
        """Encrypt and send ``buffers``; returns the plaintext bytes sent (see the class docstring)."""
        if ancdata:
            raise OSError(errno.EOPNOTSUPP, "ancillary data (file descriptors) cannot travel inside TLS")
        sent = 0
        if self._pending is not None:
            pending = self._pending
            try:
                n = self._raw.send(pending, flags)
            except (BlockingIOError, InterruptedError):
                return 0
            if n < len(pending):
                self._pending = pending[n:]
                return 0
            sent = self._pending_plain
            self._pending = None
        pieces = self._rest(buffers, sent)
        if not pieces:
            return sent
        total = sum(_nbytes(p) for p in pieces)
        if total <= _JOIN and len(pieces) > 1:
            pieces = [b"".join(pieces)]
        chunk: list[Any] = []
        size = 0
        for i, piece in enumerate(pieces):
            view = memoryview(piece).cast("B")
            while view.nbytes:
                take = view[:_CHUNK - size]
                chunk.append(take)
                size += take.nbytes
                view = view[take.nbytes:]
                if size == _CHUNK or (not view.nbytes and i == len(pieces) - 1):
                    if not self._send_chunk(chunk, size, flags):
                        return sent
                    sent += size
                    chunk, size = [], 0
        return sent

    def _rest(self, buffers: Any, skip: int) -> list[Any]:
        if not skip:
            return [b for b in buffers if _nbytes(b)]
        rest = []
        for b in buffers:
            n = _nbytes(b)
            if skip >= n:
                skip -= n
                continue
            rest.append(memoryview(b).cast("B")[skip:] if skip else b)
            skip = 0
        return rest

    def _send_chunk(self, chunk: list[Any], size: int, flags: int) -> bool:
        """Encrypt one chunk and send its ciphertext; False when the socket took only part of it
        (the rest is kept for the next send)."""
        with self._lock:
            for piece in chunk:
                self.ssl_object.write(piece)
            cipher = self._out.read()
        try:
            n = self._raw.send(cipher, flags)
        except (BlockingIOError, InterruptedError):
            n = 0
        except BaseException:
            self._pending, self._pending_plain = memoryview(cipher), size
            raise
        while n < len(cipher) and not flags & _DONTWAIT:
            n += self._raw.send(memoryview(cipher)[n:], flags)
        if n < len(cipher):
            self._pending, self._pending_plain = memoryview(cipher)[n:], size
            return False
        return True

    def recv_into(self, buffer: Any, nbytes: int = 0, flags: int = 0) -> int:
        """Decrypted bytes into ``buffer``: as many as are ready (at least one TLS record, or what
        the raw socket raises: ``BlockingIOError`` with ``MSG_DONTWAIT``, a timeout). 0 at the end
        of the stream. ``MSG_PEEK`` only tells whether bytes are there (returns 1)."""
        if flags & _PEEK:
            if self.ssl_object.pending() or self._in.pending:
                return 1
            return self._raw.recv_into(buffer, nbytes, flags)
        view = memoryview(buffer).cast("B")
        want = nbytes or view.nbytes
        got = 0
        while True:
            with self._lock:
                while got < want:
                    try:
                        n = self.ssl_object.read(want - got, view[got:])
                    except ssl.SSLWantReadError:
                        break
                    except ssl.SSLZeroReturnError:
                        return got
                    if n == 0:
                        return got
                    got += n
            if got:
                return got
            n = self._raw.recv_into(self._rawbuf, 0, flags & _DONTWAIT)
            if n == 0:
                return 0
            with self._lock:
                self._in.write(self._rawbuf[:n])

    def close(self) -> None:
        self._raw.close()

    def __getattr__(self, name: str) -> Any:
        # Options, addresses and the descriptor are the TCP socket's own; a method that moves bytes
        # and is not defined here (recv, sendall, recvmsg, ...) would bypass TLS: not offered.
        if name in _RAW_ATTRIBUTES:
            return getattr(self._raw, name)
        raise AttributeError(f"{type(self).__name__} has no {name!r} (it would bypass TLS)")


_RAW_ATTRIBUTES = frozenset({"setsockopt", "getsockopt", "fileno", "family", "type", "proto",
                             "getpeername", "getsockname", "shutdown", "settimeout", "gettimeout",
                             "setblocking", "getblocking"})
