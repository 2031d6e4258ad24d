"""Device printf output of one session: kept on the server until the client fetches it.

A kernel's ``printf`` lines go to the session that launched it (the backend is handed the
session's :class:`OutputBuffer` as the launch's sink), never to the server's stdout. The buffer is
bounded like CUDA's printf FIFO (``cudaLimitPrintfFifoSize``, 1 MiB by default): a line that does
not fit is dropped and counted, and the server logs the first loss of each full buffer once.
``CR_SET_OUTPUT_LIMIT`` changes the size (up to 16 MiB).
``CR_DEVICE_OUTPUT`` (:func:`device_output`, run on the session's ordered worker, so it sees every
kernel queued before it) returns the text and the count of lost lines, and empties the buffer.
"""
from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

from ..cudafacts import curesult
from ..backends.base import BackendError
from ..protocol import gen as P

if TYPE_CHECKING:
    from .session import Session

log = logging.getLogger(__name__)

DEFAULT_LIMIT = P.CRICKET_DEFAULT_OUTPUT     # CUDA's default printf FIFO size (1 MiB)


class OutputBuffer:
    """The pending printf output of one session (a callable sink taking each line as a str)."""

    def __init__(self, session_id: int = 0, limit: int = DEFAULT_LIMIT) -> None:
        self.session_id = session_id
        self.limit = check_limit(limit)
        self._parts: list[bytes] = []
        self._size = 0
        self._dropped = 0
        self._lock = threading.Lock()     # the worker writes; a teardown may read

    def __call__(self, text: str) -> None:
        self.write(text)

    def write(self, text: str) -> None:
        data = text.encode("utf-8", "replace")
        with self._lock:
            if self._size + len(data) > self.limit:
                if not self._dropped:
                    log.warning("session %d: device printf buffer full (%d bytes): dropping further "
                                "lines until the client fetches them", self.session_id, self.limit)
                self._dropped += 1
                return
            self._parts.append(data)
            self._size += len(data)
        log.debug("session %d: device printf %r", self.session_id, text)

    def take(self) -> tuple[bytes, int]:
        """The pending text and the number of lines lost since the last take; both are cleared."""
        with self._lock:
            text = b"".join(self._parts)
            dropped = self._dropped
            self._parts, self._size, self._dropped = [], 0, 0
        return text, dropped

    @property
    def pending(self) -> int:
        """Bytes waiting to be fetched."""
        return self._size


def check_limit(limit: int) -> int:
    if not 0 < limit <= P.CRICKET_MAX_OUTPUT:
        raise ValueError(f"printf buffer of {limit} bytes: use 1 to {P.CRICKET_MAX_OUTPUT}")
    return limit


def set_output_limit(session: Session, size: int) -> None:
    """CR_SET_OUTPUT_LIMIT: the session's printf buffer size (cudaLimitPrintfFifoSize) from now on."""
    if session.backend is None:
        raise BackendError(curesult.NOT_INITIALIZED, "call HELLO before any other procedure")
    try:
        session.output.limit = check_limit(size)
    except ValueError as exc:
        raise BackendError(curesult.INVALID_VALUE, str(exc)) from None


def device_output(session: Session) -> tuple[bytes, int]:
    """CR_DEVICE_OUTPUT: the session's pending printf output and lost-line count (then cleared)."""
    if session.backend is None:
        raise BackendError(curesult.NOT_INITIALIZED, "call HELLO before any other procedure")
    return session.output.take()
