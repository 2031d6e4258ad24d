"""Which server a call goes to, when ``CRICKET_SERVER`` lists several (``cricket.client.servers``).

With one server the ``Runtime``'s route is a ``single_server.SingleServer``: its one session.
With several it is a :class:`ServerRouting`, which answers the same methods (it extends the
one-server route, whose work it calls once it knows the server), so the call sites of both API
faces stay as they are:

- ``select_device`` (run under ``device_lock`` by both faces' guards before every call, as
  ``multi_device`` is set): ``Runtime.conn`` becomes the session of the calling thread's device,
  switched to that device's ordinal on its server. Kernels, modules, allocations, device
  synchronisation and per-thread streams follow the current device this way.
- calls that name a device pointer (copies, memset, free): the pointer's server, found by the
  address ranges each server answered to ``CR_PLACE_DEVICES`` (emu), else by the allocation
  table (the cuda backend answers none; an allocation that overlaps another server's fails).
- streams and events belong to the server of the device they were made on (application handle
  -> server); a copy or memset on one server in a stream of another first waits for that stream.
- a copy between devices of two servers goes through this process, chunk by chunk
  (:meth:`copy_across`); a stream waiting on another server's event waits here for the event
  before later work is queued (:meth:`stream_wait_event`): both keep CUDA's ordering.
- a lost connection makes that server's devices fail with cudaErrorDevicesUnavailable, as a GPU
  that fell off the bus; the other servers' devices keep working (:meth:`lost`).
"""
from __future__ import annotations

import logging
from typing import Any

from cricket.client.errors import ERR_INVALID_HANDLE, ERR_MEMORY, CudaRuntimeError, error_source
from cricket.client.servers import Member, Servers, copy_between
from cricket.client.single_server import SingleServer, StreamRef

log = logging.getLogger(__name__)


class ServerRouting(SingleServer):
    """The routing of one runtime over ``servers`` (module docstring). Every session's ``devices``
    is the combined device list (what ``Runtime.devices``, the driver snapshot and the guards read)."""

    def __init__(self, rt: Any, servers: Servers) -> None:
        super().__init__(rt)
        self.servers = servers
        self.current: Member = servers.device_member[0] if servers.devices else servers.members[0]
        self.stream_member: Member | None = None     # of the stream the current call named
        self.stream_members: dict[int, Member] = {}  # application stream -> its server
        self.event_members: dict[int, Member] = {}   # application event -> its server
        self.allocation_members: dict[int, Member] = {}   # allocation start -> its server
        for member in servers.members:
            member.session.devices = servers.devices

    # --- where a call goes ----------------------------------------------------------------

    def enter(self, device: int) -> Any:
        """Make ``device``'s session (switched to its ordinal there) the runtime's ``conn``."""
        member = self.servers.device_member[device]
        self.current = member
        self.stream_member = None
        if member.broken:
            # calls answered here (the device count, its properties, cudaSetDevice) still work;
            # those that reach the lost server fail on its closed connection
            self.rt._conn = member.session
        else:
            self.rt._conn = member.switch(self.servers.devices[device].ordinal)
        return self.rt._conn

    def select_device(self) -> None:
        self.enter(self.rt.thread.device)

    def member_of(self, ptr: int) -> Member:
        """The server of device address ``ptr``: by the placed ranges, else by the allocations,
        else the current device's."""
        member = self.servers.member_at(ptr)
        if member is not None:
            return member
        found = self.rt.allocation_table.allocation_at(ptr)
        if found is not None:
            return self.allocation_members.get(found[0], self.current)
        return self.current

    def pointer_session(self, ptr: int) -> Any:
        return self.member_of(ptr).check()

    def stream_session(self, handle: int) -> Any:
        return self.stream_members.get(handle, self.current).check()

    def event_session(self, handle: int) -> Any:
        member = self.event_members.get(handle)
        if member is None:
            raise CudaRuntimeError(ERR_INVALID_HANDLE, f"event {handle:#x} does not exist")
        return member.check()

    def device_session(self, device: int) -> Any:
        return self.servers.device_member[device].check()

    def same_server(self, device: int, peer: int) -> bool:
        members = self.servers.device_member
        return members[device] is members[peer]

    def stream(self, handle: int) -> int:
        server = super().stream(handle)
        self.stream_member = self.stream_members.get(handle, self.current)
        return server

    def copy_route(self, ptr: int, stream: int, sync: bool) -> tuple[Any, int, bool]:
        member = self.member_of(ptr)
        session = member.check()
        owner = self.stream_member if stream else None
        if owner is not None and owner is not member:
            # A stream of another server: its earlier work first, then this copy here, complete
            # before the call returns (so its later work comes after it too).
            other = owner.check()
            other._check(other._stub.CR_STREAM_SYNCHRONIZE(stream), "cuStreamSynchronize")
            return session, 0, True
        return session, stream, sync

    # --- copies ---------------------------------------------------------------------------

    def htod(self, dst: int, src: int, count: int, stream: int, sync: bool) -> None:
        session, stream, sync = self.copy_route(dst, stream, sync)
        self.rt.copies.htod(session, dst, src, count, stream, sync)

    def dtoh(self, dst: int, src: int, count: int, stream: int) -> None:
        session, stream, _ = self.copy_route(src, stream, True)
        self.rt.copies.dtoh(session, dst, src, count, stream)

    def dtoh_start(self, dst: int, src: int, count: int, stream: int) -> Any:
        session, stream, _ = self.copy_route(src, stream, True)
        return self.rt.copies.dtoh_start(session, dst, src, count, stream)

    def dtod(self, dst: int, src: int, count: int, stream: int, sync: bool) -> None:
        to, source = self.member_of(dst), self.member_of(src)
        if to is source:
            session, stream, sync = self.copy_route(dst, stream, sync)
            session.memcpy_dtod(dst, src, count, stream=StreamRef(stream), sync=sync)
            return
        self.copy_across(to, dst, source, src, count, stream)

    def copy_across(self, to: Member, dst: int, source: Member, src: int, count: int, stream: int) -> None:
        """A copy between devices of two servers, through this process: device to host from one,
        host to device to the other, in chunks (``servers.copy_between``). The stream's earlier work
        comes first and the copy is complete when the call returns (an asynchronous one as well),
        so the stream's later work comes after it, as in CUDA."""
        src_session, dst_session = source.check(), to.check()
        owner = self.stream_member if stream else None
        if owner is not None:
            owner.check()._check(owner.session._stub.CR_STREAM_SYNCHRONIZE(stream), "cuStreamSynchronize")
        copy_between(dst_session, dst, src_session, src, count)
        self.rt.stats.bytes_dtoh += count
        self.rt.stats.bytes_htod += count
        log.debug("copied %d bytes from %s to %s through this process", count, source.address, to.address)

    # --- allocations ----------------------------------------------------------------------

    def add_allocation(self, ptr: int, size: int) -> None:
        """File an allocation the current device's server made; one that overlaps an allocation of
        another server (possible only where the servers answered no address ranges) is freed
        again and fails: the program could not tell the two apart."""
        member = self.current
        start = self.rt.allocation_table.overlapping(ptr, size)
        if start is not None:
            other = self.allocation_members.get(start, member)
            if other is not member:
                session = member.check()
                session._check(session._stub.CR_MEM_FREE(ptr), "cuMemFree")
                raise CudaRuntimeError(ERR_MEMORY, f"the server {member.address} allocated "
                                       f"[{ptr:#x}, {ptr + size:#x}), which overlaps an allocation of the "
                                       f"server {other.address}; these two servers cannot be used together "
                                       "in one process (give each its own address range)")
        super().add_allocation(ptr, size)
        self.allocation_members[ptr] = member

    def remove_allocation(self, ptr: int) -> int | None:
        size = super().remove_allocation(ptr)
        if size is not None:
            self.allocation_members.pop(ptr, None)
        return size

    # --- streams and events ---------------------------------------------------------------

    def create_stream(self, flags: int) -> int:
        handle = super().create_stream(flags)
        self.stream_members[handle] = self.current
        return handle

    def create_event(self, flags: int) -> int:
        handle = super().create_event(flags)
        self.event_members[handle] = self.current
        return handle

    def record_event(self, event: int, stream: int) -> None:
        self.rt.stream(stream)
        member = self.event_members.get(event)
        if member is not None and member is not self.stream_member:
            raise CudaRuntimeError(ERR_INVALID_HANDLE, f"event {event:#x} belongs to a device of the server "
                                   f"{member.address}, the stream to one of {self.stream_member.address}; "
                                   "record it in a stream of its own device")
        super().record_event(event, stream)

    def stream_wait_event(self, stream: int, event: int) -> None:
        """A wait on an event of another server: this process waits for the event there, then
        the stream's later work is queued after it."""
        self.rt.stream(stream)
        member = self.event_members.get(event)
        if member is not None and member is not self.stream_member:
            self.rt.synchronize_event(event)     # its copies into host memory landed too
            log.info("a stream of the server %s waits for an event of the server %s: waited here for "
                     "the event before queueing more", self.stream_member.address, member.address)
            return
        super().stream_wait_event(stream, event)

    # --- failures -------------------------------------------------------------------------

    def lost(self, exc: BaseException) -> None:
        if error_source(exc)[0] != "connection":
            return
        self.servers.lost(self.current, exc)
        if all(m.broken for m in self.servers.members):
            self.rt._broken = "the connections to all the cricket servers were lost"
