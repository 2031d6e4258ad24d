"""Polling a socket for a reply before sleeping in the read: the wait of every blocking call.

Pure-Python twin of ``cricket._cext.socket_poll`` (``cext/socket_poll.pyx``, interface in
``cricket/_cext/socket_poll.pxd``), which polls a plain socket in C without the GIL; chosen by
``cricket._select.load`` (``CRICKET_PUREPYTHON=1`` takes this one).
"""
from __future__ import annotations

import os
import socket
import time
from typing import Any

_PEEK = socket.MSG_PEEK | socket.MSG_DONTWAIT


def wait_readable(sock: Any, peek: bytearray, seconds: float, yield_cpu: bool) -> bool:
    """Poll ``sock`` (without sleeping) for up to ``seconds``, or until bytes or the end of the
    stream are there; the read that follows reports whatever it finds. Between polls the thread
    yields its CPU (sched_yield) when ``yield_cpu``. ``peek`` is a one-byte buffer to peek into;
    ``sock`` may be any socket-like object whose ``recv_into`` takes ``MSG_PEEK`` (TLS). False
    when the window passed with nothing there; True when the read should come now."""
    pause = os.sched_yield if yield_cpu else None
    clock = time.perf_counter
    end = clock() + seconds
    while True:
        try:
            sock.recv_into(peek, 1, _PEEK)      # bytes (or 0 at the end): stop polling
            return True
        except (BlockingIOError, InterruptedError):
            if clock() > end:
                return False
            if pause is not None:
                pause()
        except OSError:                         # for the read to report
            return True
