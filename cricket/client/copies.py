"""The copies between the application's host memory and the device: host-to-device, device-to-host,
and the device-to-host copies deferred to the next synchronising call (an asynchronous copy into
pinned memory), which ``Copies`` owns and completes in issue order.

Pure-Python twin of ``cricket._cext.copies`` (``cext/copies.pyx``, interface in
``cricket/_cext/copies.pxd``); ``cricket._select.load`` picks one, ``CRICKET_PUREPYTHON=1`` this one.
A synchronous copy from or to pinned memory the server maps (``shm_pinned``) names its range; a
copy of at least ``shm.MIN_COPY`` bytes goes through shared memory when the server is on this
host; the rest over the socket (``direct``: chunks of ``COPY_CHUNK``, large replies received
straight into the application's memory).
"""
from __future__ import annotations

import threading
from typing import Any

from cricket import _select
from cricket.client import shm, shm_pinned
from cricket.client.direct import (
    COPY_CHUNK, PROC_DTOH, PROC_HTOD_ASYNC, dtoh_args, htod_buffers, receive_data_into,
)
from cricket.protocol import PROGRAM, VERSION

hostmem = _select.load("cricket._cext.hostmem", "cricket.client.hostmem")


class Copies:
    """The copies of one process; ``stats`` (``Stats``) counts the bytes. A started
    device-to-host copy is a ``shm.DtohCopy`` or ``(session, pending calls, dst, count)``."""

    def __init__(self, stats: Any) -> None:
        self.stats = stats
        # deferred device-to-host copies: (number, started copy, host address, bytes), in issue order
        self.pending: list[tuple[int, Any, int, int]] = []
        self.deferred_total = 0                    # copies ever deferred (numbers them)
        self.event_marks: dict[int, int] = {}      # event -> copies deferred before its last record
        self.draining = False
        self._lock = threading.Lock()
        self._drain_lock = threading.Lock()

    def forked(self) -> None:
        """In a forked child: a lock held by a thread that does not exist there would never be
        released."""
        self._lock = threading.Lock()
        self._drain_lock = threading.Lock()
        self.draining = False

    def forget(self) -> None:
        """The session is gone (a forked child's new one): its copies with it."""
        self.pending.clear()
        self.event_marks.clear()

    def htod(self, conn: Any, dst: int, src: int, count: int, stream: int, sync: bool) -> None:
        """Copy ``count`` bytes at host address ``src`` to device address ``dst`` (``stream`` is the
        server's handle); an asynchronous one leaves in the next batch."""
        self.stats.bytes_htod += count
        if self.pending:               # the source may be the target of a copy deferred before
            self.settle_host_range(src, count)
        if sync and shm_pinned.htod(conn, dst, src, count, stream):    # pinned memory the server maps
            return
        if count >= shm.MIN_COPY:      # through shared memory with a server on this host
            done = shm.htod(conn, dst, hostmem.view(src, count), stream, sync)
            dst, src, count = dst + done, src + done, count - done
            if not count:
                return
        # A synchronous copy sends the application's bytes in place (a gathering write of a head
        # and a view of its memory); an asynchronous one takes a copy now, because the batch
        # leaves later and the source may change after the call.
        if not sync:
            rpc = conn._rpc
            for off in range(0, count, COPY_CHUNK):
                data = hostmem.read(src + off, min(COPY_CHUNK, count - off))
                rpc.call_batched(PROGRAM, VERSION, PROC_HTOD_ASYNC,
                                 htod_buffers(dst + off, stream, memoryview(data)))
            return
        conn._htod_sync(dst, stream, hostmem.view(src, count))

    def dtoh(self, conn: Any, dst: int, src: int, count: int, stream: int) -> None:
        """A synchronous device-to-host copy: ``dtoh_start`` and ``dtoh_finish`` in one, for a
        caller with no deferred copies to complete in between. A copy that fits one chunk and
        stays on the socket is one call whose reply is read inline."""
        if shm_pinned.dtoh(conn, dst, src, count, stream):     # pinned memory the server maps
            self.stats.bytes_dtoh += count
            return
        if count >= shm.MIN_COPY or count > COPY_CHUNK:
            if shm.dtoh(conn, hostmem.view(dst, count), src, stream):
                self.stats.bytes_dtoh += count
                return
            return self.dtoh_finish(self.dtoh_start(conn, dst, src, count, stream))
        self.stats.bytes_dtoh += count
        reply = conn._rpc.call(PROGRAM, VERSION, PROC_DTOH, [dtoh_args(src, count, stream)])
        conn._data_reply(reply, hostmem.view(dst, count), count)

    def dtoh_start(self, conn: Any, dst: int, src: int, count: int, stream: int) -> Any:
        """Send a device-to-host copy's calls; :meth:`dtoh_finish` collects its data."""
        self.stats.bytes_dtoh += count
        if count >= shm.MIN_COPY and (copy := shm.start_dtoh(conn, hostmem.view(dst, count), src, stream)):
            return copy
        rpc = conn._rpc
        calls = [rpc.start(PROGRAM, VERSION, PROC_DTOH, [dtoh_args(src + off, min(COPY_CHUNK, count - off),
                                                                  stream)])
                 for off in range(0, count, COPY_CHUNK)]
        return conn, calls, dst, count

    def dtoh_finish(self, started: Any) -> None:
        if isinstance(started, shm.DtohCopy):
            return started.finish()
        conn, calls, dst, count = started
        for i, call in enumerate(calls):
            n = min(COPY_CHUNK, count - i * COPY_CHUNK)
            # Large chunks go from the socket straight into the application's memory.
            view = hostmem.view(dst + i * COPY_CHUNK, n)
            reply = receive_data_into(call, view)
            if reply is not None:
                conn._data_reply(reply, view, n)

    def defer(self, started: Any, dst: int, count: int) -> None:
        """Let the device-to-host copy ``started`` into ``dst`` complete at the next
        synchronising call. A copy through shared memory whose parts do not all fit the free
        slots completes now instead, after the copies deferred before it: they may land on the
        same host bytes, and stream order says the later copy's bytes stay."""
        if isinstance(started, shm.DtohCopy) and not started.issue_all():
            self.finish_deferred()
            if not started.issue_all():
                return started.finish()
        with self._lock:
            self.pending.append((self.deferred_total, started, dst, count))
            self.deferred_total += 1

    def mark_event(self, event: int) -> None:
        """``event`` was recorded: the copies deferred so far come before it."""
        self.event_marks[event] = self.deferred_total

    def settle_host_range(self, address: int, count: int) -> None:
        """Complete the deferred device-to-host copies first when one of them writes into
        ``[address, address + count)``, which the caller is about to read or change (an
        asynchronous copy from pinned memory, a host-to-host copy, freeing pinned memory): in
        stream order the earlier copy's bytes are there by then."""
        pending = self.pending
        if pending and any(dst < address + count and address < dst + n for _, _, dst, n in pending):
            self.finish_deferred()

    def finish_deferred(self, before: int | None = None) -> None:
        """Complete the deferred device-to-host copies (with ``before``, those deferred before
        that count), in the order they were issued (a later copy into the same bytes must land
        last); raises the first failure after finishing all."""
        # One drain at a time: a thread that finds the list empty while another thread is still
        # writing the copies it took must wait for them (its stream may be among them).
        with self._drain_lock:
            self.draining = True
            try:
                with self._lock:
                    pending = self.pending
                    cut = len(pending) if before is None else \
                        next((i for i, entry in enumerate(pending) if entry[0] >= before), len(pending))
                    pending, self.pending = pending[:cut], pending[cut:]
                error = None
                for _, started, _, _ in pending:
                    try:
                        self.dtoh_finish(started)
                    except Exception as exc:      # finish the others; report the first failure
                        error = error or exc
            finally:
                self.draining = False
        if error is not None:
            raise error
