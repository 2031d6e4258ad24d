"""Payload sinks: a call's large opaque argument received straight into memory its handler names
(the server's; :class:`ReplySink` at the end is the client's mirror, for a reply's result).

A procedure whose arguments are a few fixed-size fields followed by one ``opaque<>`` (a
host-to-device copy: destination, stream, bytes) may register a hook with
:meth:`cricket.rpc.Server.add_payload_sink`. When such a call arrives as one record fragment of at
least :data:`SINK_MIN` bytes, starts a read (the connection is at a record boundary), carries
AUTH_NONE and has exactly the shape its arguments declare, the server gives the hook the fixed
fields and the opaque's length before any of the opaque's bytes are kept. The hook answers with a
:class:`PayloadSink` (a writable view of exactly that many bytes and the function that completes
the call) or ``None``; with a sink, the rest of the record is received into the view, with no
record buffer and no copy of the server's own, and the call is answered with what ``complete``
returns. With ``None`` (or a call of another shape) the record takes the ordinary path: decoded,
checked, handled; so a hook refuses whatever it is unsure of and the ordinary path reports it.

Hooks and ``complete`` run on the event loop, with :func:`cricket.rpc.current_call` set, and must
not block. A connection that closes while a sink fills leaves its bytes partly written, as a copy
interrupted half-way does.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

SINK_MIN = 64 * 1024   # smaller records are cheaper to receive whole than to divert

SinkHook = Callable[[bytes, int], "PayloadSink | None"]


@dataclasses.dataclass(slots=True)
class PayloadSink:
    """Where a call's opaque goes (``view``: writable, exactly the opaque's length) and the
    function that answers the call once it is there (returns the procedure's result)."""

    view: memoryview
    complete: Callable[[], Any]


class Receiving:
    """A sink being filled: the opaque's bytes go into the sink's view, its XDR padding (0-3
    bytes) into a scratch buffer."""

    __slots__ = ("xid", "entry", "context", "sink", "filled", "size", "pad", "_pad_buf", "_pad_filled")

    def __init__(self, xid: int, entry: Any, context: tuple, sink: PayloadSink, size: int,
                 pad: int) -> None:
        self.xid = xid
        self.entry = entry
        self.context = context          # what cricket.rpc.current_call() reads while it completes
        self.sink = sink
        self.size = size
        self.pad = pad
        self.filled = 0
        self._pad_buf = memoryview(bytearray(4))
        self._pad_filled = 0

    @property
    def done(self) -> bool:
        return self.filled == self.size and self._pad_filled == self.pad

    def window(self) -> memoryview:
        """The buffer the next read fills: the rest of the opaque, then the rest of its padding."""
        if self.filled < self.size:
            return self.sink.view[self.filled:]
        return self._pad_buf[self._pad_filled:self.pad]

    def advance(self, nbytes: int) -> bool:
        """Count ``nbytes`` read into :meth:`window`; True once the whole opaque is in."""
        if self.filled < self.size:
            self.filled += nbytes
        else:
            self._pad_filled += nbytes
        return self.done

    def fill(self, data: memoryview) -> int:
        """Take bytes that already arrived (at most what is still missing); returns how many."""
        used = 0
        while used < len(data) and not self.done:
            window = self.window()
            take = min(len(window), len(data) - used)
            window[:take] = data[used:used + take]
            self.advance(take)
            used += take
        return used


@dataclasses.dataclass(slots=True)
class ReplySink:
    """The client's mirror of :class:`PayloadSink`: where a reply's result goes
    (:meth:`cricket.rpc.Client.result_into`). A successful reply whose result is exactly ``head``
    followed by ``len(view)`` bytes (and their XDR padding) is received with those bytes going
    straight from the socket into ``view``; any other reply is returned whole, as
    :meth:`cricket.rpc.PendingCall.result` returns it."""

    head: bytes
    view: memoryview
