"""The step before every synchronising call's answer: the deferred device-to-host copies complete
(``copies``), and the device printf output of the kernels before it is fetched alongside them and
written to C stdout, where the application's own printf goes (``device_output``)."""
from __future__ import annotations

import atexit
import logging
from typing import Any, Callable

from cricket.client import device_output

log = logging.getLogger(__name__)


class Drain:
    """``copies`` (``Copies``) holds the deferred copies, ``stats.launches`` counts the launches (no
    output fetch when none came since the last); ``current(conn)`` says whether ``conn`` is still
    the process's live session (at exit, a forked child's or a lost one is left alone)."""

    def __init__(self, copies: Any, stats: Any, current: Callable[[Any], bool]) -> None:
        self.copies = copies
        self.stats = stats
        self.current = current

    def idle(self, conn: Any) -> bool:
        """True when :meth:`run` has nothing to do now: no deferred device-to-host copy, no device
        printf output to fetch."""
        copies = self.copies
        return not copies.pending and not copies.draining and (conn is None or not conn.output.armed)

    def run(self, conn: Any) -> None:
        """Complete the deferred copies and write the printf output of the kernels before."""
        if self.idle(conn):
            return
        printed = None
        if conn is not None and conn.output.armed:
            self.print_to_c(conn)
            printed = conn.output.start(conn, self.stats.launches)
        try:
            if self.copies.pending or self.copies.draining:
                self.copies.finish_deferred()
        finally:
            if printed is not None:
                conn.output.finish(printed)

    def print_to_c(self, conn: Any) -> None:
        """Device printf output of ``conn`` goes to C stdout, and what the last kernels printed is
        fetched at exit as well."""
        out = conn.output
        if out.runtime is self:
            return
        out.runtime = self
        out.write = device_output.c_stdout()
        # Registered after the connection was made, so it runs before the runtime closes it at exit.
        atexit.register(self._flush_at_exit, conn)

    def _flush_at_exit(self, conn: Any) -> None:
        """At exit (CUDA flushes the printf buffer at context teardown): what the last kernels printed."""
        if not self.current(conn):
            return
        try:
            conn.output.flush(conn, self.stats.launches)
        except Exception as exc:     # exiting anyway: say what was lost
            log.warning("the device printf output of the last kernels could not be fetched at exit: %s", exc)
