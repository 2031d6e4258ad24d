"""What a command does when its reader goes away (``cricket fatbin x | head``)."""
from __future__ import annotations

import os
import signal
import sys

#: the status a shell reports for a Unix tool that SIGPIPE ended (128 + 13): ours is the same
CLOSED_STDOUT_STATUS = 128 + signal.SIGPIPE


def closed_stdout() -> int:
    """Quietly end a command whose stdout was closed; returns the exit status to use.

    Python ignores SIGPIPE, so a write to a closed pipe raises BrokenPipeError; the buffered
    rest would raise again when the interpreter flushes stdout at exit, so stdout is pointed
    at /dev/null first.
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass
    return CLOSED_STDOUT_STATUS
