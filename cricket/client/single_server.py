"""Where a call goes with one server: its one session. ``Runtime.route`` is a :class:`SingleServer`
until ``CRICKET_SERVER`` lists several servers; then it is a ``server_routing.ServerRouting``,
which answers the same methods by device, pointer, stream or event. The ``Runtime`` keeps the
names both API faces call and hands each to its route in one line."""
from __future__ import annotations

import logging
from typing import Any

from cricket.client.errors import ERR_INVALID_HANDLE, CudaRuntimeError, error_source
from cricket.cudafacts import streams

log = logging.getLogger(__name__)


class StreamRef:
    """The ``stream`` argument a session's copies expect (an object with ``handle``)."""
    __slots__ = ("handle",)

    def __init__(self, handle: int) -> None:
        self.handle = handle


class SingleServer:
    """The route of a runtime with one server (module docstring)."""

    def __init__(self, rt: Any) -> None:
        self.rt = rt

    # --- where a call goes ----------------------------------------------------------------

    def select_device(self) -> None:
        rt = self.rt
        device = rt.thread.device
        if device != rt._server_device:
            rt.conn.set_device(device)
            rt._server_device = device

    def stream(self, handle: int) -> int:
        if handle == 0 or handle == streams.LEGACY:
            return 0
        rt = self.rt
        if handle == streams.PER_THREAD:
            return rt.per_thread_stream()
        try:
            return rt.streams[handle]
        except KeyError:
            raise CudaRuntimeError(ERR_INVALID_HANDLE, f"stream {handle:#x} does not exist") from None

    def pointer_session(self, ptr: int) -> Any:
        return self.rt.conn

    def stream_session(self, handle: int) -> Any:
        return self.rt.conn

    def event_session(self, handle: int) -> Any:
        return self.rt.conn

    def device_session(self, device: int) -> Any:
        return self.rt.conn

    def same_server(self, device: int, peer: int) -> bool:
        return True

    def copy_route(self, ptr: int, stream: int, sync: bool) -> tuple[Any, int, bool]:
        return self.rt.conn, stream, sync

    # --- copies ---------------------------------------------------------------------------

    def htod(self, dst: int, src: int, count: int, stream: int, sync: bool) -> None:
        rt = self.rt
        rt.copies.htod(rt._conn or rt.conn, dst, src, count, stream, sync)

    def dtoh(self, dst: int, src: int, count: int, stream: int) -> None:
        rt = self.rt
        rt.copies.dtoh(rt._conn or rt.conn, dst, src, count, stream)

    def dtoh_start(self, dst: int, src: int, count: int, stream: int) -> Any:
        rt = self.rt
        return rt.copies.dtoh_start(rt.conn, dst, src, count, stream)

    def dtod(self, dst: int, src: int, count: int, stream: int, sync: bool) -> None:
        self.rt.conn.memcpy_dtod(dst, src, count, stream=StreamRef(stream), sync=sync)

    # --- allocations ----------------------------------------------------------------------

    def add_allocation(self, ptr: int, size: int) -> None:
        rt = self.rt
        rt.reserve(ptr, size)
        with rt._lock:
            rt.allocation_table.add(ptr, size, rt.thread.device)

    def remove_allocation(self, ptr: int) -> int | None:
        rt = self.rt
        with rt._lock:
            return rt.allocation_table.remove(ptr)

    # --- streams and events ---------------------------------------------------------------

    def create_stream(self, flags: int) -> int:
        rt = self.rt
        handle = self._create(rt.streams, "CR_STREAM_CREATE", flags, "cuStreamCreate")
        if flags & streams.NON_BLOCKING:
            rt.nonblocking.add(handle)
        return handle

    def create_event(self, flags: int) -> int:
        return self._create(self.rt.events, "CR_EVENT_CREATE", flags, "cuEventCreate")

    def _create(self, table: dict[int, int], proc: str, flags: int, name: str) -> int:
        """A new server stream or event (``proc``), filed in ``table``; its application handle."""
        rt = self.rt
        conn = rt.conn
        server = conn._check(getattr(conn._stub, proc)(flags & 0xFFFFFFFF), name).handle
        handle = rt.new_handle()
        table[handle] = server
        return handle

    def record_event(self, event: int, stream: int) -> None:
        from cricket.protocol import gen as P
        rt = self.rt
        server = rt.stream(stream)
        conn = rt.event_session(event)
        conn._stub.CR_EVENT_RECORD_ASYNC_batched(P.cr_event_record_args(event=rt.event(event), stream=server))
        rt.copies.mark_event(event)        # the copies deferred before it
        if event in rt.ipc_events:         # another process may wait on it (cricket.client.ipc)
            conn._rpc.flush()

    def stream_wait_event(self, stream: int, event: int) -> None:
        from cricket.protocol import gen as P
        rt = self.rt
        if rt.ipc_events.get(event):       # another process's event: its work is not in this session
            rt.synchronize_event(event)
            return
        server = rt.stream(stream)
        rt.stream_session(stream)._stub.CR_STREAM_WAIT_EVENT_ASYNC_batched(
            P.cr_stream_wait_args(stream=server, event=rt.event(event)))

    # --- failures -------------------------------------------------------------------------

    def lost(self, exc: BaseException) -> None:
        rt = self.rt
        if error_source(exc)[0] == "connection" and not rt._broken:
            rt._broken = f"the connection to the cricket server was lost ({exc})"
            log.error("%s; CUDA calls now fail with cudaErrorDevicesUnavailable", rt._broken)
