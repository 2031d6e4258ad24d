"""What the server counts, in one place: per session (calls, bytes copied, kernels, errors) and
server-wide (the totals of closed sessions, call latencies). ``cricket status``, ``cricket top``
and the Prometheus metrics read these; the hot path only adds to counters.

A session's counters are updated by the event loop and by its own worker without a lock (a lost
increment costs one count of one session); the server-wide ones, which every session's worker
adds to, take :attr:`ServerStats.lock` (once per kernel, error or closed session, never per
copy). A reader copies a counter (one C-level operation) and sees figures a moment old.
"""
from __future__ import annotations

import bisect
import threading
import time
from collections import Counter

from ..cudafacts import curesult

# Upper bounds (seconds) of the call latency histogram buckets: 50 µs to 10 s.
LATENCY_BUCKETS = (5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2, 2.5e-2, 5e-2, 0.1, 0.25, 0.5,
                   1.0, 2.5, 10.0)
# Return codes that are answers, not failures.
NOT_ERRORS = frozenset({curesult.SUCCESS, curesult.NOT_READY})


class Latency:
    """A histogram of one procedure's call durations (cumulative buckets as Prometheus wants)."""

    __slots__ = ("counts", "sum")

    def __init__(self) -> None:
        self.counts = [0] * (len(LATENCY_BUCKETS) + 1)     # the last one: above every bound
        self.sum = 0.0

    def observe(self, seconds: float) -> None:
        self.counts[bisect.bisect_left(LATENCY_BUCKETS, seconds)] += 1
        self.sum += seconds


class SessionStats:
    """The figures of one session."""

    __slots__ = ("server", "connected", "calls", "copied", "kernels", "kernel_seconds",
                 "last_error", "last_error_message")

    def __init__(self, server: ServerStats | None = None) -> None:
        self.server = server
        self.connected = time.monotonic()
        self.calls: Counter[str] = Counter()                    # by procedure (service function name)
        self.copied: Counter[tuple[str, str]] = Counter()       # bytes by (direction, path)
        self.kernels = 0
        self.kernel_seconds = 0.0
        self.last_error = 0
        self.last_error_message = ""

    def moved(self, direction: str, path: str, size: int) -> None:
        """A copy of ``size`` bytes: direction htod, dtoh or dtod; path socket, shm or device."""
        self.copied[direction, path] += size

    def launched(self, backend: str, seconds: float) -> None:
        self.kernels += 1
        self.kernel_seconds += seconds
        if self.server is not None:
            with self.server.lock:
                self.server.kernel_seconds[backend] += seconds
                self.server.kernels[backend] += 1

    def failed(self, procedure: str, code: int, message: str) -> None:
        if code in NOT_ERRORS:
            return
        self.last_error = code
        self.last_error_message = f"{procedure}: {message}"
        if self.server is not None:
            with self.server.lock:
                self.server.errors[curesult.error_name(code)] += 1

    @property
    def age(self) -> float:
        """Seconds since the session connected."""
        return time.monotonic() - self.connected

    def bytes(self, direction: str) -> int:
        return sum(v for (d, _), v in self.copied.items() if d == direction)


class ServerStats:
    """Server-wide figures: what closed sessions did, and everything that is not per session."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.started = time.monotonic()
        self.closed_calls: Counter[str] = Counter()
        self.closed_copied: Counter[tuple[str, str]] = Counter()
        self.kernels: Counter[str] = Counter()              # by backend type
        self.kernel_seconds: Counter[str] = Counter()       # by backend type
        self.errors: Counter[str] = Counter()               # by CUDA error name
        self.latency: dict[str, Latency] = {}               # by procedure

    def session(self) -> SessionStats:
        return SessionStats(self)

    def observe(self, procedure: str, seconds: float) -> None:
        latency = self.latency.get(procedure)
        if latency is None:
            latency = self.latency[procedure] = Latency()
        # Latency.observe, inline: every call the server answers comes here
        latency.counts[bisect.bisect_left(LATENCY_BUCKETS, seconds)] += 1
        latency.sum += seconds

    def closed(self, stats: SessionStats) -> None:
        """Keep a closed session's counts in the totals (counters never go down)."""
        with self.lock:
            self.closed_calls.update(stats.calls)
            self.closed_copied.update(stats.copied)

    @property
    def uptime(self) -> float:
        return time.monotonic() - self.started
