"""Child processes that never outlive the process that started them (Linux ``PR_SET_PDEATHSIG``).

``cricket run`` starts a local server and the program; when ``cricket run`` ends in any way,
SIGKILL included, the kernel sends each of them a signal, so neither is left behind.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import signal
from typing import Callable

log = logging.getLogger(__name__)

PR_SET_PDEATHSIG = 1        # <linux/prctl.h>

_libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def tied_preexec(death_signal: int = signal.SIGTERM) -> Callable[[], None]:
    """A ``preexec_fn`` for :class:`subprocess.Popen` that ties the child to this thread.

    The child gets ``death_signal`` when the thread that starts it exits (Linux ties the
    death signal to the thread, so start tied children from a thread that lives as long as they
    should, such as the main thread). The child's signal mask is cleared: the parent may hold
    signals blocked to wait for them (:func:`cricket.client.run_cli.run`), and a child would
    otherwise inherit that mask through exec.
    """
    parent = os.getpid()
    prctl = _libc.prctl         # looked up before the fork: the child only calls it

    def preexec() -> None:
        signal.pthread_sigmask(signal.SIG_SETMASK, ())
        prctl(PR_SET_PDEATHSIG, int(death_signal), 0, 0, 0)
        if os.getppid() != parent:      # the parent died before prctl took effect
            os._exit(128 + int(death_signal))

    return preexec
