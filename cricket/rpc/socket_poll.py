"""Polling a socket for a reply before sleeping in the read: the wait of every blocking call.

Pure-Python twin of ``cricket._cext.socket_poll`` (``cext/socket_poll.pyx``, interface in
``cricket/_cext/socket_poll.pxd``), which polls a plain socket in C without the GIL; chosen by
``cricket._select.load`` (``CRICKET_PUREPYTHON=1`` takes this one).

A yield between polls that comes back late pauses the polling of every wait in the process for a
while (the rule of ``cricket.rpc.contention``): the machine is busy, and the waits then sleep in
their reads at once.
"""
from __future__ import annotations

import os
import socket
import time
from typing import Any

from .contention import paused_until

_PEEK = socket.MSG_PEEK | socket.MSG_DONTWAIT
_paused_until = 0.0         # monotonic seconds: no polling before this (a busy machine)


def note_yield(before: float, after: float) -> bool:
    """Apply the contention rule to a yield between polls that ran from ``before`` to ``after``
    (``time.monotonic`` seconds): True when it came back late and polling is paused now."""
    until = paused_until(before, after)
    if until > _paused_until:
        pause_polling(until)
    return until > 0.0


def pause_polling(until: float) -> None:
    """No yielding wait polls before ``until`` (``time.monotonic`` seconds); 0.0 resumes now."""
    global _paused_until
    _paused_until = until


def polling_paused_until() -> float:
    """The ``time.monotonic`` time until which waits do not poll (0.0: never paused)."""
    return _paused_until


def wait_readable(sock: Any, peek: bytearray, seconds: float, yield_cpu: bool) -> bool:
    """Poll ``sock`` (without sleeping) for up to ``seconds``, or until bytes or the end of the
    stream are there; the read that follows reports whatever it finds. Between polls the thread
    yields its CPU (sched_yield) when ``yield_cpu``, and a yield that comes back late ends the
    poll and pauses polling (see :func:`note_yield`); while it is paused, a yielding wait does not
    poll at all. ``peek`` is a one-byte buffer to peek into; ``sock`` may be any socket-like object
    whose ``recv_into`` takes ``MSG_PEEK`` (TLS). False when the window passed (or was skipped)
    with nothing seen; True when the read should come now."""
    clock = time.monotonic
    now = clock()
    if yield_cpu and now < _paused_until:
        return False
    end = now + seconds
    while True:
        try:
            sock.recv_into(peek, 1, _PEEK)      # bytes (or 0 at the end): stop polling
            return True
        except (BlockingIOError, InterruptedError):
            before = clock()
            if before > end:
                return False
            if yield_cpu:
                os.sched_yield()
                if note_yield(before, clock()):
                    return False
        except OSError:                         # for the read to report
            return True
