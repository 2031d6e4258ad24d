"""The client runtime: CUDA runtime-API semantics on top of cricket.x calls.

One ``Runtime`` per process (``RUNTIME``) holds the connection (opened at the first call that needs
the server, re-opened in a forked child), the kernels and variables registered by nvcc's start-up
code (keyed by host address; their module reaches the server at the first use), per-thread state
(last error, current device, the launch configuration stack), the device address windows reserved
in this process, pinned host allocations, and the streams and events handed to the application.

The functions registered at the bottom are what the libcudart shim's forwarded calls end up in
(``cricket.client.runtime_api``): they take the C arguments as integers, write out-parameters
through ``hostmem`` and return the ``cudaError_t``.
"""
from __future__ import annotations

import atexit
import ctypes
import logging
import os
import sys
import threading
import time
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable

from cricket import _select
from cricket.cudafacts import device_attributes
from cricket.cudafacts.cudart_errors import CODES
from cricket.cudafacts.fatbin_magic import CONTAINER_MAGIC, MAX_IN_MEMORY
from cricket.client import device_records
from cricket.client.errors import (  # noqa: F401  (the codes the API faces use, from one place)
    ERR_HOST_NOT_REGISTERED, ERR_HOST_REGISTERED, ERR_INVALID_CONFIG, ERR_INVALID_DEVICE,
    ERR_INVALID_DEVPTR, ERR_INVALID_FUNCTION, ERR_INVALID_HANDLE, ERR_INVALID_KIND, ERR_INVALID_SYMBOL,
    ERR_INVALID_VALUE, ERR_MEMORY, ERR_NO_DEVICE, ERR_NOT_READY, ERR_NOT_SUPPORTED, ERR_UNAVAILABLE,
    ERR_UNKNOWN, SUCCESS, CudaError, CudaRuntimeError, SessionUnavailable, cuda_error_of, error_source,
)
from cricket.client.registry import REGISTRATIONS
from cricket.client.allocations import AllocationTable
from cricket.client.single_server import SingleServer, StreamRef
from cricket.client.windows import D2D, D2H, DEFAULT, H2D, H2H, PAGE, AddressWindows  # noqa: F401
from cricket.client.mapped import MappedMemory
from cricket.client.pinned import PinnedMemory
from cricket.client.drain import Drain
from cricket.rpc.client import spin_seconds

hostmem = _select.load("cricket._cext.hostmem", "cricket.client.hostmem")
launch_queue = _select.load("cricket._cext.launch_queue", "cricket.client.launch_queue")
copies = _select.load("cricket._cext.copies", "cricket.client.copies")

log = logging.getLogger(__name__)

E = CODES
# cudaDeviceSchedule* (driver_types.h), the same numbers as the driver's CU_CTX_SCHED_*
SCHEDULE_AUTO, SCHEDULE_SPIN, SCHEDULE_YIELD, SCHEDULE_BLOCKING_SYNC = 0, 1, 2, 4
SCHEDULE_MASK = 0x07

MAX_INLINE = 4194304                   # CRICKET_MAX_INLINE

# The device attributes every launch is checked against (cricket.cudafacts.device_attributes).
A_MAX_THREADS_PER_BLOCK, A_MAX_BLOCK_X, A_MAX_GRID_X = (
    device_attributes.MAX_THREADS_PER_BLOCK, device_attributes.MAX_BLOCK_DIM_X, device_attributes.MAX_GRID_DIM_X)
A_SHARED_PER_BLOCK, A_SHARED_OPTIN = (device_attributes.MAX_SHARED_MEMORY_PER_BLOCK,
                                      device_attributes.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)


# ------------------------------------------------------------------ registry records

@dataclass
class KernelRecord:
    host_fun: int
    handle: int                        # fatbin handle it was registered from
    name: str
    function: int = 0                  # server function handle, once the module is loaded
    layout: tuple = ()                 # ((offset, size), ...)
    param_size: int = 0
    attributes: dict[str, int] = field(default_factory=dict)


@dataclass
class VarRecord:
    host_var: int
    handle: int
    name: str
    size: int
    ptr: int = 0


@dataclass
class Stats:
    """What the application did through cricket (printed by ``cricket run --stats``)."""
    launches: int = 0
    bytes_htod: int = 0
    bytes_dtoh: int = 0
    modules_loaded: int = 0
    images_sent: int = 0
    started: float = field(default_factory=time.monotonic)


class PerThreadStreams(dict):
    """device -> server stream: one host thread's per-thread default streams. It lives in the
    thread's state, which Python drops when the thread exits (for a native thread, when the shim
    deletes the thread state it kept for it, cext/common/bootstrap.c); the streams are destroyed
    on the server then, not at the end of the session."""
    __slots__ = ("runtime", "epoch", "pid")

    def __init__(self, runtime: Runtime, epoch: int) -> None:
        super().__init__()
        self.runtime = weakref.ref(runtime)
        self.epoch = epoch
        self.pid = os.getpid()

    def __del__(self) -> None:
        if self and self.pid == os.getpid() and not sys.is_finalizing():
            runtime = self.runtime()
            if runtime is not None:
                runtime.release_thread_streams(self)


class _ThreadState(threading.local):
    def __init__(self, runtime: Runtime) -> None:
        self.last_error = 0
        self.device = 0
        self.configs: list[tuple] = []
        # device -> server stream (per-thread default), valid while its epoch is the runtime's
        self.pt_streams = PerThreadStreams(runtime, runtime._stream_epoch)


class Runtime:
    """The client state of one process (see the module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._conn: Any = None
        self._pid = os.getpid()
        self._broken: str | None = None
        # CRICKET_SERVER listing several servers: their sessions and combined device list
        # (cricket.client.servers); None with one server
        self.servers: Any = None
        # where each call goes: the one server (cricket.client.single_server), or with several
        # the server of its device, pointer, stream or event (cricket.client.server_routing)
        self.route: Any = SingleServer(self)
        self.no_device = ""                        # why no device is visible (CUDA_VISIBLE_DEVICES)
        self._stream_epoch = 0                     # bumped when per-thread streams are gone (reset, fork)
        self.thread = _ThreadState(self)
        self.kernels: dict[int, KernelRecord] = {}
        self.vars: dict[int, VarRecord] = {}
        self.modules: dict[Any, int] = {}          # fatbin handle (and device) -> server module handle
        self.device_records: dict[tuple[int, int], Any] = {}   # device_records.on_device
        self.allocation_table = AllocationTable()  # device allocations: start -> size, device
        self.allocations = self.allocation_table.sizes            # (what the API faces read)
        self.allocation_devices = self.allocation_table.devices
        self._libc = _libc()
        self.pinned = PinnedMemory(self._libc)     # pinned host memory, allocated and registered
        self.host_allocs = self.pinned.allocs      # (the tables the API faces read: address -> size)
        self.host_registered = self.pinned.registered
        self.mapped_memory = MappedMemory(self)    # mapped pinned memory and its device copies
        self.streams: dict[int, int] = {}          # application handle -> server handle
        self.nonblocking: set[int] = set()         # application streams made cudaStreamNonBlocking
        self.events: dict[int, int] = {}
        # IPC events (cricket.client.ipc): event -> True when opened from another process, False
        # when exported to one; their records go out at once, waits on opened ones wait here
        self.ipc_events: dict[int, bool] = {}
        self.per_thread_streams: set[int] = set()  # server streams of per-thread default streams
        self.multi_device = False                  # some thread chose a device other than 0
        self.device_lock = threading.RLock()       # held across a call while multi_device
        self._server_device = 0                    # the session's current device on the server
        self.device_flags: dict[int, int] = {}     # device -> its cudaSetDeviceFlags flags
        self.schedule = SCHEDULE_AUTO              # how a thread waits for a reply (set_schedule)
        self._next_handle = 0x5C0000
        self.stats = Stats()
        self.copies = copies.Copies(self.stats)    # the copies, and the deferred device-to-host ones
        self.drainer = Drain(self.copies, self.stats, self._current)
        self.launches = launch_queue.LaunchQueue(self._launch_limits, self.mapped_memory, self.stats)
        self.address_windows = AddressWindows(self._libc)

    # --- connection -------------------------------------------------------------------

    @property
    def conn(self) -> Any:
        """The server connection; opened at the first use, and again in a forked child."""
        conn = self._conn
        if conn is not None:
            return conn
        with self._lock:
            if self._pid != os.getpid():
                self._after_fork()
            if self._broken:
                raise SessionUnavailable(self._broken)
            if self._conn is None:
                self._connect()
            return self._conn

    def connection(self) -> Any:
        """``conn``, also when no device is visible (for the version and device-list queries)."""
        try:
            return self.conn
        except CudaRuntimeError:
            if not self.no_device:
                raise
            return self._conn

    def _connect(self) -> None:
        from cricket.client.session import Session
        address = os.environ.get("CRICKET_SERVER") or None
        backend = os.environ.get("CRICKET_BACKEND", "")
        local = None
        if address is not None and "," in address:
            return self._connect_servers(address, backend)
        try:
            if address is None:
                # No server named: start one of our own, without this shim preloaded into it.
                from cricket.client.local_server import LocalServer
                preload = ":".join(p for p in os.environ.get("LD_PRELOAD", "").split(":")
                                   if p and "libcricket-cudart" not in p)
                local = LocalServer([backend] if backend else None, env={"LD_PRELOAD": preload})
                address = local.address
                os.environ["CRICKET_SERVER"] = address    # forked children use it too
                atexit.register(self._stop_embedded, local)
            self._conn = Session(address, backend=backend, timeout=_timeout())
        except Exception as exc:
            where = address or "(embedded)"
            from cricket.rpc.errors import SystemErr
            if isinstance(exc, CudaError):      # HELLO answered: the server refused this process
                self._broken = f"the cricket server at {where} refused this process: {exc.message}"
            elif isinstance(exc, SystemErr):    # refused before HELLO, e.g. over its --max-sessions
                self._broken = (f"the cricket server at {where} refused a new session (RPC SYSTEM_ERR): it "
                                "may be serving its --max-sessions already; its log says why")
            else:
                self._broken = (f"cannot reach the cricket server at {where}: {exc} (start one with "
                                "`cricket server`, or run the program with `cricket run -- CMD`)")
            log.error("%s; CUDA calls fail with cudaErrorDevicesUnavailable", self._broken)
            raise SessionUnavailable(self._broken) from exc
        apply_schedule(self._conn._rpc, self.schedule)
        log.info("connected to %s (%s backend, %d device(s))%s", self._conn.server, self._conn.backend,
                 len(self._conn.devices), " started for this process" if local else "")
        if not self._conn.devices:
            # as cudart when cuInit finds no device: every call that needs one fails with
            # cudaErrorNoDevice (measured with NVIDIA's static cudart)
            self.no_device = (f"CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES')!r} shows none "
                              f"of the server's {len(self._conn.server_devices)} device(s)")
            log.warning("%s: CUDA calls fail with cudaErrorNoDevice", self.no_device)
            raise CudaRuntimeError(ERR_NO_DEVICE, self.no_device)

    def _connect_servers(self, text: str, backend: str) -> None:
        """``CRICKET_SERVER`` lists several servers: a session with each, their devices as one list
        (``cricket.client.servers``), and every call routed to its device's, pointer's, stream's or
        event's server (``cricket.client.server_routing``)."""
        from cricket.client.server_routing import ServerRouting
        from cricket.client.servers import Servers, ServerListError, parse_servers
        from cricket.client.session import Session
        try:
            addresses = parse_servers(text)
            self.servers = Servers.open(addresses, lambda address: Session(
                address, backend=backend, timeout=_timeout(), all_devices=True))
        except (ServerListError, SessionUnavailable) as exc:
            self._broken = f"CRICKET_SERVER: {exc}" if isinstance(exc, ServerListError) else str(exc)
            log.error("%s; CUDA calls fail with cudaErrorDevicesUnavailable", self._broken)
            raise SessionUnavailable(self._broken) from exc
        servers = self.servers
        for member in servers.members:
            apply_schedule(member.session._rpc, self.schedule)
        self.route = ServerRouting(self, servers)
        self.multi_device = True                   # every call goes to its device's server
        log.info("connected to %d servers (%s), %d device(s) together", len(servers.members),
                 ", ".join(f"{m.address}: {m.session.backend}, {len(m.session.server_devices)}"
                           for m in servers.members), len(servers.devices))
        if not servers.devices:
            self._conn = servers.members[0].session
            self.no_device = (f"CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES')!r} shows none "
                              f"of the servers' {len(servers.all_devices)} device(s)")
            log.warning("%s: CUDA calls fail with cudaErrorNoDevice", self.no_device)
            raise CudaRuntimeError(ERR_NO_DEVICE, self.no_device)
        self.route.enter(self.thread.device if self.thread.device < len(servers.devices) else 0)

    def _stop_embedded(self, local: Any) -> None:
        """At exit: the server this process started must not outlive it."""
        if self._pid != os.getpid():
            return
        try:
            if self._conn is not None:
                self._conn.close()
            local.stop()
        except Exception as exc:         # exiting anyway; say what was left behind
            log.warning("stopping the embedded cricket server failed: %s", exc)

    def forked(self) -> None:
        """In a forked child (os.register_at_fork, which the shim's fork handlers also run): the
        next call opens a session of its own."""
        if self._pid != os.getpid():
            self._conn = None
            if self.servers is not None:         # the child opens sessions of its own with every server
                self.servers = None
                self.route = SingleServer(self)
            # a lock held by a thread that does not exist in the child would never be released
            self._lock = threading.RLock()
            self.pinned.forked()
            self.copies.forked()
            self.device_lock = threading.RLock()

    def _after_fork(self) -> None:
        # The child shares the parent's socket: leave it to the parent and start a session of its
        # own. Device memory, modules, streams and events belong to the parent's session (CUDA
        # forbids using a context across fork as well).
        log.info("forked child %d: opening its own cricket session", os.getpid())
        self._pid = os.getpid()
        self._conn = None
        self._broken = None
        self.no_device = ""
        self.modules.clear()
        self.device_records.clear()
        self.launches.forget()
        self.allocation_table.clear()
        self.streams.clear()
        self.nonblocking.clear()
        self.events.clear()
        self.forget_per_thread_streams()
        self.copies.forget()
        self.mapped_memory.forget()
        self._server_device = 0                    # a new session starts on device 0
        for k in self.kernels.values():
            k.function = 0
        for v in self.vars.values():
            v.ptr = 0

    def call_failed(self, name: str, exc: BaseException, serious: bool,
                    logger: logging.Logger = log) -> None:
        """An API call ``name`` failed with ``exc``: note a lost connection and log it (as an
        error when ``serious``, a code that says nothing more precise, else at debug level)."""
        self.lost(exc)
        source, code = error_source(exc)
        if source == "driver":      # a kernel's fault: its details on stderr, once
            from cricket.client.kernel_faults import report
            report(code, getattr(exc, "message", ""))
        if serious and not isinstance(exc, SessionUnavailable):     # that one was logged already
            logger.error("%s failed: %s", name, exc)
        else:
            logger.debug("%s: %s", name, exc)

    def lost(self, exc: BaseException) -> None:
        """The connection failed: every later call fails at once instead of waiting (with several
        servers, every later call to the lost server's devices)."""
        self.route.lost(exc)

    @property
    def devices(self) -> list:
        conn = self._conn        # (the connection property only when there is none yet: a hot path)
        return (conn if conn is not None else self.conn).devices

    # --- errors ------------------------------------------------------------------------

    def fail(self, code: int) -> int:
        if code:
            self.thread.last_error = code
        return code

    # --- handles ------------------------------------------------------------------------

    def new_handle(self) -> int:
        with self._lock:
            self._next_handle += 0x10
            return self._next_handle

    def stream(self, handle: int) -> int:
        """The server handle of an application stream (0 for the default streams)."""
        return self.route.stream(handle)

    def per_thread_stream(self) -> int:
        """The server stream serving as this host thread's per-thread default stream on its current
        device (``cudaStreamPerThread``, and handle 0 in the ``_ptsz``/``_ptds`` variants); created
        through the protocol at the thread's first use. Like CUDA's, it is a blocking stream: it
        orders with the legacy default stream, not with other threads' per-thread streams."""
        st = self.thread
        if st.pt_streams.epoch != self._stream_epoch:
            st.pt_streams.clear()          # forgotten: destroyed by a reset, or the parent's
            st.pt_streams = PerThreadStreams(self, self._stream_epoch)
        server = st.pt_streams.get(st.device)
        if server is None:
            conn = self.conn
            server = conn._check(conn._stub.CR_STREAM_CREATE(0), "cuStreamCreate").handle
            st.pt_streams[st.device] = server
            with self._lock:
                self.per_thread_streams.add(server)
        return server

    def release_thread_streams(self, streams: PerThreadStreams) -> None:
        """A host thread exited: destroy its per-thread default streams on the server (nothing
        when they were forgotten meanwhile, or the connection is gone)."""
        conn = self._conn
        if conn is None or self._broken or streams.epoch != self._stream_epoch:
            return
        with self._lock:
            mine = [(d, s) for d, s in streams.items() if s in self.per_thread_streams]
            self.per_thread_streams.difference_update(s for _, s in mine)
        for device, server in mine:
            try:
                conn = self.device_session(device)
                conn._check(conn._stub.CR_STREAM_DESTROY(server), "cuStreamDestroy")
            except Exception as exc:      # the thread is gone; say what was left behind
                self.lost(exc)
                log.debug("per-thread stream %#x of an exited thread: %s", server, exc)
                return
        log.debug("a host thread exited: its per-thread stream(s) %s destroyed",
                  ", ".join(f"{s:#x}" for _, s in mine))

    def forget_per_thread_streams(self) -> list[int]:
        """Drop every thread's per-thread stream (each thread creates a new one at its next use);
        returns the server handles, for the caller to destroy when they still exist."""
        with self._lock:
            self._stream_epoch += 1
            gone, self.per_thread_streams = list(self.per_thread_streams), set()
        return gone

    def set_device(self, device: int) -> None:
        """Make ``device`` (a valid ordinal) the calling host thread's current device, as
        cudaSetDevice does in CUDA: other threads keep theirs. The server session follows the
        calling thread's device at each call (:meth:`select_device`)."""
        self.thread.device = device
        if device != self._server_device:
            self.multi_device = True

    def set_schedule(self, schedule: int) -> None:
        """How the process waits for the server from now on: one of the SCHEDULE_* values (the
        cudaDeviceSchedule* flags, which are also the driver's CU_CTX_SCHED_*)."""
        self.schedule = schedule
        conn = self._conn
        if conn is not None:
            apply_schedule(conn._rpc, schedule)

    # Where a call goes: ``route``'s answer (``single_server``, or ``server_routing`` with several).

    def pointer_session(self, ptr: int) -> Any:
        """The session of the server holding device address ``ptr``."""
        return self.route.pointer_session(ptr)

    def stream_session(self, handle: int) -> Any:
        """The session of the server holding application stream ``handle``."""
        return self.route.stream_session(handle)

    def event_session(self, handle: int) -> Any:
        """The session of the server holding application event ``handle``."""
        return self.route.event_session(handle)

    def device_session(self, device: int) -> Any:
        """The session of the server holding ``device`` (an ordinal of this process)."""
        return self.route.device_session(device)

    def same_server(self, device: int, peer: int) -> bool:
        """True when the two devices (ordinals of this process) are on one server."""
        return self.route.same_server(device, peer)

    def copy_route(self, ptr: int, stream: int, sync: bool) -> tuple[Any, int, bool]:
        """(session, server stream, sync) for a copy or memset at device address ``ptr`` in
        server stream ``stream``."""
        return self.route.copy_route(ptr, stream, sync)

    def select_device(self) -> None:
        """Switch the server session to the calling thread's device if it is on another one
        (the caller holds ``device_lock``)."""
        self.route.select_device()

    def event(self, handle: int) -> int:
        try:
            return self.events[handle]
        except KeyError:
            raise CudaRuntimeError(ERR_INVALID_HANDLE, f"event {handle:#x} does not exist") from None

    # --- operations both API layers run (runtime_calls and driver_api stay thin) -------------
    # ``before`` is the synchronising step the calling layer runs first (default: drain).

    def create_stream(self, flags: int) -> int:
        """A new server stream; its application handle."""
        return self.route.create_stream(flags)

    def destroy_stream(self, handle: int, server: int) -> None:
        """Destroy the server stream ``server`` of application stream ``handle``."""
        conn = self.stream_session(handle)
        conn._check(conn._stub.CR_STREAM_DESTROY(server), "cuStreamDestroy")
        del self.streams[handle]
        self.nonblocking.discard(handle)

    def synchronize_stream(self, handle: int, before: Callable[[], Any] | None = None) -> None:
        server = self.stream(handle)
        (before or self.drain)()
        conn = self.stream_session(handle)
        conn._check(conn._stub.CR_STREAM_SYNCHRONIZE(server), "cuStreamSynchronize")
        self.synchronized()

    def query_stream(self, handle: int, before: Callable[[], Any] | None = None) -> int:
        """The server's status of the stream (0 done, else the error); ``before`` runs when done."""
        server = self.stream(handle)
        res = self.stream_session(handle)._stub.CR_STREAM_QUERY(server)
        if res.status == 0:
            (before or self.drain)()
            self.synchronized()
        return res.status

    def synchronized(self) -> None:
        """The step after every synchronisation (device, stream, event, a blocking copy): what
        kernels wrote into mapped memory comes back to its host pages."""
        self.mapped_memory.after_sync()

    def synchronize_device(self, before: Callable[[], Any] | None = None) -> None:
        """Wait for all the device's work (cudaDeviceSynchronize, cuCtxSynchronize)."""
        (before or self.drain)()
        self.conn.synchronize()
        self.synchronized()

    def unregister_host(self, ptr: int) -> bool:
        """Hand host memory registered at ``ptr`` back to the program; False when it is not."""
        size = self.host_registered.get(ptr)
        if size is None:
            return False
        self.settle_host_range(ptr, size)     # copies deferred into it land before it is the program's again
        self.synchronized()                   # and what kernels wrote into it, when it is mapped
        self.mapped_memory.unregister(ptr)
        self.host_registered.pop(ptr, None)
        return True

    def stream_wait_event(self, stream: int, event: int) -> None:
        self.route.stream_wait_event(stream, event)

    def create_event(self, flags: int) -> int:
        """A new server event; its application handle."""
        return self.route.create_event(flags)

    def record_event(self, event: int, stream: int) -> None:
        self.route.record_event(event, stream)

    def synchronize_event(self, event: int, before: Callable[[], Any] | None = None) -> None:
        server = self.event(event)
        (before or self.drain)()
        conn = self.event_session(event)
        conn._check(conn._stub.CR_EVENT_SYNCHRONIZE(server), "cuEventSynchronize")
        self.synchronized()

    def query_event(self, event: int) -> int:
        """The server's status of the event (0 done, else the error). Once it is done, the
        device-to-host copies deferred before its record have landed too (later ones may still
        wait for their stream: a query does not wait for them)."""
        server = self.event(event)
        status = self.event_session(event)._stub.CR_EVENT_QUERY(server).status
        if status == 0:
            if self.copies.pending:
                self.finish_deferred(self.copies.event_marks.get(event, 0))
            self.synchronized()
        return status

    def event_elapsed_ms(self, start: int, end: int) -> float:
        from cricket.protocol import gen as P
        conn = self.event_session(start)
        res = conn._check(conn._stub.CR_EVENT_ELAPSED_TIME(
            P.cr_elapsed_args(start=self.event(start), end=self.event(end))), "cuEventElapsedTime")
        return res.value

    def destroy_event(self, event: int) -> None:
        server = self.event(event)
        conn = self.event_session(event)
        conn._check(conn._stub.CR_EVENT_DESTROY(server), "cuEventDestroy")
        del self.events[event]
        self.copies.event_marks.pop(event, None)
        self.ipc_events.pop(event, None)

    def store_mem_info(self, free: int, total: int) -> None:
        """Write the device's free and total memory to the (optional, may be NULL) out-pointers."""
        f, t = self.conn.mem_get_info()
        if free:
            hostmem.store_u64(free, f)
        if total:
            hostmem.store_u64(total, t)

    def free_allocation(self, ptr: int) -> bool:
        """Free the device allocation at ``ptr`` on the server; False when it is not ours."""
        conn = self.pointer_session(ptr)
        return self.release_allocation(ptr, lambda: conn._check(conn._stub.CR_MEM_FREE(ptr), "cuMemFree"))

    def memset(self, dst: int, value: int, count: int, stream: int, sync: bool, element_size: int = 1,
               before: Callable[[], Any] | None = None) -> None:
        """Set ``count`` elements of ``element_size`` bytes at ``dst`` to ``value``."""
        if count == 0:
            return
        server = self.stream(stream)
        if sync:
            (before or self.drain)()
        mask = (1 << (8 * element_size)) - 1
        conn, server, sync = self.copy_route(dst, server, bool(sync))
        conn.memset(dst, value & mask, count, element_size=element_size, stream=StreamRef(server), sync=sync)

    def reset_device(self, name: str, before: Callable[[], Any] | None = None) -> Any:
        """Free this process's device memory, streams and events (modules stay loaded), after
        a synchronisation whose error the reset clears; returns the connection."""
        (before or self.drain)()
        conn = self.conn
        try:
            conn.synchronize()
        except Exception as exc:        # a sticky error is cleared by the reset
            log.debug("%s: %s", name, exc)
        self.mapped_memory.forget()
        for ptr in list(self.allocations):
            self.free_allocation(ptr)
        for handle in list(self.streams):
            self.stream_session(handle)._stub.CR_STREAM_DESTROY(self.streams[handle])
            del self.streams[handle]
            self.nonblocking.discard(handle)
        for handle in list(self.events):
            self.event_session(handle)._stub.CR_EVENT_DESTROY(self.events[handle])
            del self.events[handle]
        return conn

    # --- registry --------------------------------------------------------------------------

    def kernel(self, host_fun: int) -> KernelRecord:
        k = self.kernels.get(host_fun)
        if k is None:
            raise CudaRuntimeError(ERR_INVALID_FUNCTION, f"{host_fun:#x} is not a registered kernel")
        if self.thread.device:          # devices other than 0 load the module again (device_records)
            k = device_records.on_device(self, k, self.thread.device)
        if not k.function:
            self._resolve_kernel(k)
        return k

    def module(self, handle: int) -> int:
        conn = self.conn
        key = device_records.module_key(handle, self.thread.device)
        mod = self.modules.get(key)
        if mod is not None:
            return mod
        with self._lock:
            mod = self.modules.get(key)
            if mod is None:
                mod = self.modules[key] = self.load_image(self._module_image(handle),
                                                          REGISTRATIONS.get(handle).kind)
                if conn.output.armed:      # once a module prints, lines go to C stdout
                    self.drainer.print_to_c(conn)
            return mod

    def load_image(self, image: bytes, kind: int) -> int:
        """Load a module image by hash (both API faces); its server handle."""
        conn = self.conn
        handle, sent = conn.load_image(image, kind)
        self.stats.modules_loaded += 1
        self.stats.images_sent += sent
        log.debug("module %#x loaded (%d bytes, kind %d, %s)", handle, len(image), kind,
                  "sent" if sent else "server already held it")
        return handle

    def _module_image(self, handle: int) -> bytes:
        entry = REGISTRATIONS.get(handle)
        if entry.image is None:
            raise CudaRuntimeError(E["cudaErrorInvalidKernelImage"],
                                f"fatbin {handle:#x} holds no fatbin container cricket can read")
        parts = [entry.image]
        if entry.wrapper_version == 2 and entry.wrapper:
            # -rdc: the wrapper's third word points at a NULL-terminated array of the translation
            # units' relocatable containers, filled by the link stub before registration.
            parts += read_linked_containers(hostmem.load_u64(entry.wrapper + 16))
        return join_containers(parts)

    def _resolve_kernel(self, k: KernelRecord) -> None:
        from cricket.protocol import gen as P
        from cricket.client import sass_only
        from cricket.client.registry import REGISTRATIONS
        sass_only.check_launchable(self.conn.backend, REGISTRATIONS.get(k.handle), k.name)
        mod = self.module(k.handle)
        conn = self.conn
        res = conn._check(conn._stub.CR_MODULE_GET_FUNCTION(P.cr_get_args(module=mod, name=k.name)),
                          f"cuModuleGetFunction({k.name})")
        f = res.function
        layout = tuple((p.offset, p.size) for p in f.params)
        for off, size in layout:
            if off + size > f.param_size:
                raise CudaRuntimeError(E["cudaErrorInvalidKernelImage"],
                                    f"kernel {k.name}: parameter at {off}+{size} lies past its "
                                    f"{f.param_size}-byte parameter buffer")
        k.layout = layout
        k.param_size = f.param_size
        k.attributes = {"max_threads_per_block": f.max_threads_per_block, "num_regs": f.num_regs,
                        "shared_size_bytes": f.shared_size_bytes, "const_size_bytes": f.const_size_bytes,
                        "local_size_bytes": f.local_size_bytes, "ptx_version": f.ptx_version,
                        "binary_version": f.binary_version}
        k.function = f.handle

    def var(self, host_var: int) -> VarRecord:
        v = self.vars.get(host_var)
        if v is None:
            raise CudaRuntimeError(ERR_INVALID_SYMBOL, f"{host_var:#x} is not a registered "
                                "__device__ or __constant__ variable")
        if self.thread.device:
            v = device_records.on_device(self, v, self.thread.device)
        if not v.ptr:
            from cricket.protocol import gen as P
            mod = self.module(v.handle)
            conn = self.conn
            g = conn._check(conn._stub.CR_MODULE_GET_GLOBAL(P.cr_get_args(module=mod, name=v.name)),
                            f"cuModuleGetGlobal({v.name})").global_
            self.reserve(g.ptr, g.size)
            v.ptr, v.size = g.ptr, g.size
        return v

    # --- device address windows (cricket.client.windows) --------------------------------------

    def reserve(self, ptr: int, size: int) -> None:
        self.address_windows.reserve(ptr, size)

    def is_device(self, ptr: int) -> bool:
        """True when ``ptr`` is a device address: in a reserved window, or a byte of an allocation
        (one of size 0 has none)."""
        if self.address_windows.covers(ptr):
            return True
        found = self.allocation_table.allocation_at(ptr)
        return found is not None and ptr < found[0] + found[1]

    def in_allocation(self, ptr: int, count: int) -> bool:
        """True when [ptr, ptr+count) (``count`` > 0) lies inside one device allocation of this process."""
        found = self.allocation_table.allocation_at(ptr)
        return found is not None and ptr + count <= found[0] + found[1]

    def add_allocation(self, ptr: int, size: int) -> None:
        self.route.add_allocation(ptr, size)

    def remove_allocation(self, ptr: int) -> int | None:
        """Forget the allocation at ``ptr``; its size, or None when it is not one of ours."""
        return self.route.remove_allocation(ptr)

    def release_allocation(self, ptr: int, free_on_server: Callable[[], Any]) -> bool:
        """Free the allocation at ``ptr``: forgotten here first, then ``free_on_server()``.

        False when ``ptr`` is no allocation of this process. The order matters with threads: once
        the server has freed the address, another thread's cudaMalloc may get it back at once, and
        its fresh entry must not be the one dropped. If the server refuses, the entry comes back.
        """
        device = self.allocation_devices.get(ptr, 0)
        size = self.remove_allocation(ptr)
        if size is None:
            return False
        try:
            free_on_server()
        except BaseException:
            with self._lock:
                self.allocation_table.add(ptr, size, device)
            raise
        return True

    # --- host memory -------------------------------------------------------------------------

    def host_alloc(self, size: int) -> int:
        try:
            conn = self.conn                # the server may map it (pinned.py)
        except Exception:                   # no server: ordinary memory; the next call reports it
            conn = None
        return self.pinned.alloc(size, conn)

    def host_free(self, ptr: int) -> None:
        self.pinned.free(ptr)

    def is_pinned(self, ptr: int) -> bool:
        return self.pinned.contains(ptr)

    # --- copies ---------------------------------------------------------------------------------

    def kind_of(self, dst: int, src: int, kind: int) -> int:
        if kind == DEFAULT:
            return (D2D if self.is_device(src) else H2D) if self.is_device(dst) else \
                   (D2H if self.is_device(src) else H2H)
        if kind not in (H2H, H2D, D2H, D2D):
            raise CudaRuntimeError(ERR_INVALID_KIND, f"cudaMemcpyKind {kind} does not exist")
        return kind

    # The copies themselves are ``copies.Copies``'s (compiled, with a pure twin); these keep the
    # names both API faces call.

    def htod(self, dst: int, src: int, count: int, stream: int, sync: bool) -> None:
        self.route.htod(dst, src, count, stream, sync)

    def dtod(self, dst: int, src: int, count: int, stream: int, sync: bool) -> None:
        """A device-to-device copy (both API faces); across servers, through this process."""
        self.route.dtod(dst, src, count, stream, sync)

    def dtoh(self, dst: int, src: int, count: int, stream: int) -> None:
        """A synchronous device-to-host copy (``dtoh_start`` and ``dtoh_finish`` in one)."""
        self.route.dtoh(dst, src, count, stream)

    def dtoh_start(self, dst: int, src: int, count: int, stream: int) -> Any:
        return self.route.dtoh_start(dst, src, count, stream)

    def dtoh_finish(self, started: Any) -> None:
        self.copies.dtoh_finish(started)

    def defer_dtoh(self, started: Any, dst: int, count: int) -> None:
        """Let the device-to-host copy ``started`` complete at the next synchronising call."""
        self.copies.defer(started, dst, count)

    def settle_host_range(self, address: int, count: int) -> None:
        """Complete the deferred device-to-host copies first when one writes into the range."""
        if self.copies.pending:
            self.copies.settle_host_range(address, count)

    def finish_deferred(self, before: int | None = None) -> None:
        self.copies.finish_deferred(before)

    def drain_is_idle(self) -> bool:
        """True when :meth:`drain` has nothing to do now (``drain.Drain``)."""
        return self.drainer.idle(self._conn)

    def drain(self) -> None:
        """Complete the asynchronous device-to-host copies (at every synchronising call), and write
        the device printf output of the kernels before it (fetched alongside the copies)."""
        self.drainer.run(self._conn)

    def _current(self, conn: Any) -> bool:
        """True when ``conn`` is this process's session and still works."""
        if self._pid != os.getpid() or self._broken:
            return False
        if self.servers is not None:
            return any(m.session is conn and not m.broken for m in self.servers.members)
        return self._conn is conn

    def _launch_limits(self, device: int) -> tuple:
        """The launch limits of ``device`` as 8 numbers, as ``hostmem.launch_call`` checks them: max
        threads per block, max block x/y/z, max grid x/y/z, max dynamic shared bytes."""
        a = self.device_attribute
        return (a(device, A_MAX_THREADS_PER_BLOCK) or 1024,
                *(a(device, A_MAX_BLOCK_X + i) or 1024 for i in range(3)),
                *(a(device, A_MAX_GRID_X + i) or 0x7FFFFFFF for i in range(3)),
                a(device, A_SHARED_OPTIN) or a(device, A_SHARED_PER_BLOCK) or 49152)

    def queue_launch(self, function: int, gxy: int, gz: int, bxy: int, bz: int, shared: int,
                     stream: int, args: int, layout: tuple, param_size: int) -> bool:
        """The launch hot path of both API faces (``launch_queue``): queued as one batched call
        record, checked against the calling thread's device. The grid and block come as
        ``x | y << 32`` and ``z``; ``stream`` is the server's handle. False (nothing queued) when
        the configuration breaks the device's limits."""
        return self.launches.queue(self.conn._rpc, self.thread.device, function, gxy, gz, bxy, bz,
                                   shared, stream, args, layout, param_size)

    def limits(self, device: int) -> tuple:
        """(max threads per block, max block dims, max grid dims, max dynamic shared bytes)."""
        f = self.launches.limits(device)
        return f[0], f[1:4], f[4:7], f[7]

    def compute_capability(self, device: int) -> int:
        """The device's compute capability as one number (7.5 -> 75)."""
        return (self.device_attribute(device, device_attributes.COMPUTE_CAPABILITY_MAJOR) * 10
                + self.device_attribute(device, device_attributes.COMPUTE_CAPABILITY_MINOR))

    def occupancy_limits(self, device: int) -> Any:
        """The device's limits as the occupancy calculator takes them (both API faces ask here)."""
        from cricket.cudafacts.occupancy import DeviceLimits
        return DeviceLimits.from_attributes(lambda attribute: self.device_attribute(device, attribute))

    def device_attribute(self, device: int, attribute: int) -> int:
        devices = self.devices
        if not 0 <= device < len(devices):
            raise CudaRuntimeError(ERR_INVALID_DEVICE, f"device {device} does not exist "
                                f"({len(devices)} device(s))")
        return devices[device].attributes.get(attribute, 0)


def _libc() -> ctypes.CDLL:
    """The C library, with the functions the address windows and pinned memory call declared."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                          ctypes.c_long]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    libc.posix_memalign.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t, ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    return libc


def apply_schedule(rpc: Any, schedule: int) -> None:
    """Waiting for a reply is this process's waiting for the device, so it follows CUDA's
    scheduling flags: Auto (the default) and Yield poll the socket for the polling window
    (``CRICKET_SPIN_US``, default 100 µs) giving the CPU away between polls, Spin polls without
    giving it away, BlockingSync sleeps in the read at once."""
    if schedule == SCHEDULE_BLOCKING_SYNC:
        rpc.set_polling(0.0)
    else:
        rpc.set_polling(spin_seconds(), yield_cpu=schedule != SCHEDULE_SPIN)


def _timeout() -> float | None:
    """``CRICKET_TIMEOUT``: seconds to wait for any one reply (default: no limit, since a kernel
    may legitimately run for long); past it the call fails with cudaErrorDevicesUnavailable."""
    value = os.environ.get("CRICKET_TIMEOUT", "").strip()
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        log.warning("CRICKET_TIMEOUT=%r is not a number of seconds; waiting without a limit", value)
        return None
    return seconds if seconds > 0 else None


def read_linked_containers(array: int) -> list[bytes]:
    """The containers of a NULL-terminated array of container pointers (the ``-rdc`` translation
    units of a version-2 ``__fatBinC_Wrapper_t``; at most 4096); none when ``array`` is 0."""
    parts = []
    i = 0
    while array and i < 4096:
        ptr = hostmem.load_u64(array + 8 * i)
        if not ptr:
            break
        parts.append(_read_container(ptr))
        i += 1
    return parts


def join_containers(parts: list[bytes | memoryview]) -> bytes:
    """Fatbin containers one after another, each padded to 8 bytes, as the server reads them."""
    return b"".join(piece for p in parts for piece in (p, b"\0" * (-len(p) % 8)))


def _read_container(ptr: int) -> bytes:
    """The fatbin container (header and payload) at ``ptr``."""
    head = hostmem.read(ptr, 16)
    magic = int.from_bytes(head[0:4], "little")
    header_size = int.from_bytes(head[6:8], "little")
    size = int.from_bytes(head[8:16], "little")
    if magic != CONTAINER_MAGIC or header_size < 16 or header_size + size > MAX_IN_MEMORY:
        raise CudaRuntimeError(E["cudaErrorInvalidKernelImage"],
                            f"no valid fatbin container at {ptr:#x} (an -rdc translation unit)")
    return hostmem.read(ptr, header_size + size)


RUNTIME = Runtime()
os.register_at_fork(after_in_child=RUNTIME.forked)


def _report_stats() -> None:
    if RUNTIME._conn is None or RUNTIME._pid != os.getpid():
        return
    from .run_stats import report
    report(RUNTIME.stats, RUNTIME._conn)


if os.environ.get("CRICKET_STATS"):
    atexit.register(_report_stats)
