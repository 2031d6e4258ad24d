"""Where clients on this host hand the server a file descriptor: an abstract Unix socket.

The RPC connection cannot carry a descriptor (it may be TCP, and the event loop's transport reads
the Unix socket with plain ``recv``, which drops ``SCM_RIGHTS``). So a session asks for a
:class:`Ticket` (``CR_SHM_TICKET``: 32 random bytes, good once, for :data:`TICKET_LIFETIME`
seconds), connects to the inbox's abstract ``SOCK_SEQPACKET`` address and sends the ticket as the
data of one message with the descriptor in ``SCM_RIGHTS``. The inbox answers one byte (0: taken)
and closes the connection. Whoever reaches the address without a live ticket gets nothing: the
descriptor it sent is closed at once. At most :data:`MAX_CONNECTIONS` inbox connections are open
at a time, each for at most :data:`CONNECTION_TIMEOUT` seconds; the listener runs on the event
loop, so a slow or silent peer holds no thread.
"""
from __future__ import annotations

import array
import asyncio
import logging
import os
import secrets
import socket
import threading
import time

log = logging.getLogger(__name__)

TICKET_SIZE = 32                 # CRICKET_HASH_SIZE: the ticket travels as a cr_hash
TICKET_LIFETIME = 30.0           # seconds from CR_SHM_TICKET to the descriptor's arrival
CONNECTION_TIMEOUT = 5.0         # seconds an inbox connection may take to send its message
MAX_CONNECTIONS = 64             # inbox connections open at once; more are closed on arrival
_FD = array.array("i")


class Ticket:
    """One session's permission to hand over one descriptor; holds it once it came."""

    def __init__(self, session_id: int) -> None:
        self.session_id = session_id
        self.secret = secrets.token_bytes(TICKET_SIZE)
        self.expires = time.monotonic() + TICKET_LIFETIME
        self._lock = threading.Lock()
        self._fd = -1
        self._closed = False

    def deliver(self, fd: int) -> bool:
        """Keep ``fd`` for the session; False (``fd`` closed) when the ticket is spent or revoked."""
        with self._lock:
            if self._closed or self._fd >= 0 or time.monotonic() > self.expires:
                os.close(fd)
                return False
            self._fd = fd
            return True

    def take(self) -> int:
        """The descriptor delivered (now the caller's to close), or -1; the ticket is spent."""
        with self._lock:
            fd, self._fd, self._closed = self._fd, -1, True
            return fd

    def close(self) -> None:
        fd = self.take()
        if fd >= 0:
            os.close(fd)


class FdInbox:
    """The listening socket, on the event loop, and the tickets it honours."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.address = f"cricket-fd-inbox-{os.getpid()}-{secrets.token_hex(16)}"
        self._tickets: dict[bytes, Ticket] = {}
        self._lock = threading.Lock()
        self._open: dict[int, tuple[socket.socket, asyncio.TimerHandle]] = {}
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET | socket.SOCK_CLOEXEC)
        self._listener.setblocking(False)
        self._listener.bind("\0" + self.address)
        self._listener.listen(16)
        loop.add_reader(self._listener.fileno(), self._accept)
        log.info("descriptor inbox listening on the abstract address @%s", self.address)

    def issue(self, session_id: int) -> Ticket:
        ticket = Ticket(session_id)
        now = time.monotonic()
        with self._lock:
            for secret in [s for s, t in self._tickets.items() if t.expires < now]:
                del self._tickets[secret]
            self._tickets[ticket.secret] = ticket
        return ticket

    def withdraw(self, ticket: Ticket) -> None:
        with self._lock:
            self._tickets.pop(ticket.secret, None)
        ticket.close()

    def close(self) -> None:
        self.loop.remove_reader(self._listener.fileno())
        self._listener.close()
        for fileno in list(self._open):
            self._drop(fileno)
        with self._lock:
            tickets, self._tickets = list(self._tickets.values()), {}
        for ticket in tickets:
            ticket.close()

    # --- on the event loop ---------------------------------------------------------

    def _accept(self) -> None:
        try:
            conn, _ = self._listener.accept()
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:          # e.g. out of descriptors: the listener stays
            log.warning("descriptor inbox: accept failed: %s", exc)
            return
        if len(self._open) >= MAX_CONNECTIONS:
            log.warning("descriptor inbox: %d connections open already; one more closed",
                        MAX_CONNECTIONS)
            conn.close()
            return
        conn.setblocking(False)
        fileno = conn.fileno()
        timer = self.loop.call_later(CONNECTION_TIMEOUT, self._drop, fileno)
        self._open[fileno] = (conn, timer)
        self.loop.add_reader(fileno, self._receive, fileno)

    def _drop(self, fileno: int) -> None:
        entry = self._open.pop(fileno, None)
        if entry is not None:
            conn, timer = entry
            timer.cancel()
            self.loop.remove_reader(fileno)
            conn.close()

    def _receive(self, fileno: int) -> None:
        conn = self._open[fileno][0]
        try:
            data, ancillary, flags, _ = conn.recvmsg(TICKET_SIZE + 1, socket.CMSG_SPACE(_FD.itemsize),
                                                     socket.MSG_CMSG_CLOEXEC)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._drop(fileno)
            return
        fds: list[int] = []
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.extend(array.array("i", payload[:len(payload) - len(payload) % _FD.itemsize]))
        answer = self._answer(data, flags, fds)
        try:
            conn.send(answer)
        except OSError:
            pass
        self._drop(fileno)

    def _answer(self, data: bytes, flags: int, fds: list[int]) -> bytes:
        """Hand the one descriptor to the ticket's session; the answer byte (and why not)."""
        with self._lock:
            ticket = self._tickets.pop(data, None) if len(data) == TICKET_SIZE else None
        if ticket is None or len(fds) != 1 or flags & (socket.MSG_CTRUNC | socket.MSG_TRUNC):
            for fd in fds:
                os.close(fd)
            if ticket is not None:
                ticket.close()
            why = ("no live ticket" if ticket is None else "send exactly one descriptor with the ticket")
            log.info("descriptor inbox: refused a message (%s)", why)
            return b"\1" + why.encode()
        if not ticket.deliver(fds[0]):
            return b"\1the ticket expired"
        return b"\0"
