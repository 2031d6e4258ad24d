"""Device printf output, fetched from the server and written where the application prints.

The server keeps a session's kernel ``printf`` lines (``cricket.server.device_output``); the client
fetches them with ``CR_DEVICE_OUTPUT`` at the synchronising calls where CUDA flushes its printf
buffer (device, stream and event synchronize, blocking copies, reset) and at exit, and writes them:

- for a program under the preloaded runtime, into the C ``stdout`` stream of the process (libc
  ``fwrite`` + ``fflush``), so they interleave with the program's own ``printf`` as in CUDA;
- for a Python program using :mod:`cricket.client.api`, to ``sys.stdout``.

Programs without device printf pay nothing: a connection fetches only once a module it loaded
calls ``vprintf`` (the server says so in the ``CR_MODULE_LOAD`` reply), and the runtime
only when a kernel was launched since its last fetch.
"""
from __future__ import annotations

import ctypes
import logging
import sys
import threading
from typing import Any, Callable

log = logging.getLogger(__name__)

_PROC = "CR_DEVICE_OUTPUT"


def _c_stdout_writer() -> Callable[[bytes], None]:
    libc = ctypes.CDLL(None)
    stdout = ctypes.c_void_p.in_dll(libc, "stdout")
    fwrite, fflush = libc.fwrite, libc.fflush
    fwrite.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_void_p]
    fwrite.restype = ctypes.c_size_t
    fflush.argtypes = [ctypes.c_void_p]

    def write(data: bytes) -> None:
        # The Python layer may have buffered text of its own (a Python host program): first that.
        try:
            sys.stdout.flush()
        except (AttributeError, ValueError, OSError):
            pass
        fwrite(data, 1, len(data), stdout.value)
        fflush(stdout.value)
    return write


def _python_stdout_writer(data: bytes) -> None:
    out = sys.stdout
    if out is None:
        return
    out.write(data.decode("utf-8", "replace"))
    out.flush()


_c_writer: Callable[[bytes], None] | None = None


def c_stdout() -> Callable[[bytes], None]:
    """A writer into the C ``stdout`` of this process (the preloaded runtime's output)."""
    global _c_writer
    if _c_writer is None:
        _c_writer = _c_stdout_writer()
    return _c_writer


class DeviceOutput:
    """The printf state of one connection: whether its modules print, and where lines go."""

    def __init__(self, write: Callable[[bytes], None] = _python_stdout_writer) -> None:
        self.write = write
        self.armed = False           # a loaded module calls vprintf
        self.fetches = 0             # CR_DEVICE_OUTPUT calls made (for tests and stats)
        self.dropped = 0             # lines the server lost because its buffer was full
        self._launches = -1          # the runtime's launch count at the last fetch
        self.runtime: Any = None     # the cricket.client.runtime.Runtime that uses this connection
        self._lock = threading.Lock()

    def note_module(self, prints: bool) -> None:
        """A module was loaded; ``prints``: the server found that it calls device printf (the
        ``CR_MODULE_LOAD`` reply). From then on, fetch."""
        if prints and not self.armed:
            self.armed = True
            log.debug("a loaded module calls device printf: its output is fetched at synchronising calls")

    def start(self, conn: Any, launches: int | None = None) -> Any:
        """Send CR_DEVICE_OUTPUT without waiting (None when there can be no output): it runs after
        everything queued before it on the server. ``launches``: the caller's launch count; no
        fetch when nothing was launched since the last one."""
        if not self.armed:
            return None
        if launches is None and self.runtime is not None:
            return None      # the runtime fetches at its synchronising calls (runtime_start)
        if launches is not None:
            if launches == self._launches:
                return None
            self._launches = launches
        self.fetches += 1
        return conn._start(_PROC, b"")

    def finish(self, call: Any) -> None:
        """Wait for a started fetch and write its text; a loss is reported once per full buffer."""
        if call is None:
            return
        from cricket.protocol import gen as P
        self.deliver(P.unpack_cr_output_res(call.result()))

    def deliver(self, res: Any) -> None:
        """Write a CR_DEVICE_OUTPUT reply (a ``cr_output_res``)."""
        from cricket.protocol import gen as P
        if res.status != 0:
            log.warning("fetching the device printf output failed: %s", getattr(res, "message", res.status))
            return
        out = res.output
        with self._lock:
            if out.text:
                self.write(bytes(out.text))
            if out.dropped:
                self.dropped += out.dropped
                log.warning("device printf buffer was full: %d line(s) of kernel output were lost "
                            "(synchronise more often, or raise cudaLimitPrintfFifoSize)", out.dropped)

    def flush(self, conn: Any, launches: int | None = None) -> None:
        """Fetch and write the pending output now."""
        self.finish(self.start(conn, launches))


# --- the preloaded runtime (cricket.client.runtime) ----------------------------------------------

def set_buffer_size(conn: Any, size: int, printed: bool) -> bool:
    """cudaDeviceSetLimit(cudaLimitPrintfFifoSize): the session's printf buffer size on the server.
    False (cudaErrorInvalidValue) when ``printed`` (a kernel that may print was launched already, as
    CUDA refuses then) or the size is outside 1 byte to CRICKET_MAX_OUTPUT."""
    from cricket.protocol import gen as P
    if printed or not 0 < size <= P.CRICKET_MAX_OUTPUT:
        return False
    return conn._stub.CR_SET_OUTPUT_LIMIT(size).status == 0
