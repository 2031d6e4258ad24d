"""How the workers of ``cricket server --workers N`` read each other's figures.

Each worker answers on a Unix socket of its own in a folder only the server's user may enter
(made by the parent before it forks): one request byte, one reply (8-byte length, then JSON).
The answers are read on a thread of the worker from counters, as the metrics collector does.
The status procedure of one worker asks the others without blocking its event loop; the parent's
metrics endpoint asks every worker.
"""
from __future__ import annotations

import asyncio
import json
import logging
import socket
import struct
import threading
from collections.abc import Callable
from typing import Any

from ..protocol import gen as P

log = logging.getLogger(__name__)

SESSIONS = b"s"          # the worker's sessions as CR_SERVER_STATUS lists them
FIGURES = b"f"           # its metrics figures (cricket.server.metrics.figures)
TIMEOUT = 5.0            # seconds a worker may take to answer
MAX_REPLY = 64 << 20     # the longest answer taken
_LENGTH = struct.Struct("!Q")


class PeerListener:
    """In a worker: answer each request byte with ``answers[byte]()`` as JSON, on a thread."""

    def __init__(self, path: str, answers: dict[bytes, Callable[[], Any]]) -> None:
        self.answers = answers
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.bind(path)
        self._sock.listen(16)
        threading.Thread(target=self._serve, name="cricket-worker-peers", daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return               # closed
            with conn:
                conn.settimeout(TIMEOUT)
                try:
                    answer = self.answers.get(conn.recv(1))
                    data = json.dumps(_read_twice(answer) if answer else None).encode()
                    conn.sendall(_LENGTH.pack(len(data)) + data)
                except OSError as exc:
                    log.warning("a worker's request for figures failed: %s", exc)

    def close(self) -> None:
        self._sock.close()


def _read_twice(answer: Callable[[], Any]) -> Any:
    """``answer()``; read again once if a counter changed size while it was read."""
    try:
        return answer()
    except RuntimeError:
        return answer()


def ask(path: str, request: bytes) -> Any:
    """The answer of the worker at ``path`` (blocking); None when it does not answer."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(TIMEOUT)
            sock.connect(path)
            sock.sendall(request)
            head = _receive(sock, _LENGTH.size)
            return json.loads(_receive(sock, _checked(_LENGTH.unpack(head)[0])))
    except (OSError, ValueError) as exc:
        log.warning("worker at %s did not answer: %s", path, exc)
        return None


async def ask_async(path: str, request: bytes) -> Any:
    """:func:`ask` on the running event loop."""
    try:
        async with asyncio.timeout(TIMEOUT):
            reader, writer = await asyncio.open_unix_connection(path)
            try:
                writer.write(request)
                head = await reader.readexactly(_LENGTH.size)
                return json.loads(await reader.readexactly(_checked(_LENGTH.unpack(head)[0])))
            finally:
                writer.close()
    except (OSError, ValueError, asyncio.IncompleteReadError, TimeoutError) as exc:
        log.warning("worker at %s did not answer: %s", path, exc)
        return None


def _checked(length: int) -> int:
    if length > MAX_REPLY:
        raise ValueError(f"an answer of {length} bytes is longer than {MAX_REPLY}")
    return length


def _receive(sock: socket.socket, size: int) -> bytes:
    data = bytearray()
    while len(data) < size:
        chunk = sock.recv(min(size - len(data), 1 << 20))
        if not chunk:
            raise ConnectionError("the worker closed the connection early")
        data += chunk
    return bytes(data)


def gather(paths: list[str], request: bytes) -> list[Any]:
    """The answers of the workers at ``paths`` that answered."""
    return [a for a in (ask(p, request) for p in paths) if a is not None]


def sessions_of(service: Any) -> dict[str, Any]:
    """A worker's sessions as CR_SERVER_STATUS lists them, in plain values: how many, and the rows
    of as many as a reply holds."""
    from .status import session_status
    sessions = list(service.sessions.values())
    rows = [session_status(s) for s in sessions[:P.CRICKET_MAX_STATUS_SESSIONS]]
    return {"total": len(sessions), "rows": [{name: getattr(row, name) for name in row.__slots__} for row in rows]}


class Peers:
    """The other workers of this server, as one worker sees them."""

    def __init__(self, paths: list[str]) -> None:
        self.paths = paths

    async def with_their_sessions(self, status: P.cr_server_status) -> P.cr_server_status_res:
        """CR_SERVER_STATUS's reply: ``status`` (this worker's) with the other workers' sessions."""
        answers = await asyncio.gather(*(ask_async(p, SESSIONS) for p in self.paths))
        for answer in answers:
            if answer is None:
                continue
            status.sessions_total += answer["total"]
            room = P.CRICKET_MAX_STATUS_SESSIONS - len(status.sessions)
            status.sessions += [P.cr_session_status(**row) for row in answer["rows"][:max(room, 0)]]
        return P.cr_server_status_res(status=0, server=status)
