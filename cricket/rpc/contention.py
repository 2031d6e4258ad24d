"""When a polling loop stops polling: the one rule the client's wait for a reply
(``socket_poll``, compiled and twin) and the server's event loop (``server.Server``) follow.

A poller gives its CPU away between polls (``sched_yield``). A yield to nobody returns in a
microsecond or so, one to the peer that is about to answer in tens; one that returns later than
``CONTENDED_YIELD`` gave the CPU to another process for a whole time slice: the machine is busy,
and polling on would hand a slice away at every wait. The poller then stops polling for
``CONTENDED_PAUSE`` (it sleeps in its read, or in its loop's poll, and the bytes wake it), and
tries again after that. Measured beside a CPU hog in ``docs/copies.md``.
"""
from __future__ import annotations

CONTENDED_YIELD = 200e-6     # seconds: a yield that took longer went to another process
CONTENDED_PAUSE = 0.05       # seconds without polling after such a yield


def paused_until(before: float, after: float) -> float:
    """For a yield that ran from ``before`` to ``after`` (seconds of one monotonic clock): the
    time until which polling stops, or 0.0 when the yield came back in time."""
    return after + CONTENDED_PAUSE if after - before > CONTENDED_YIELD else 0.0
