"""CRICKET_PROG version 1 on the RPC server: the generated skeleton with every procedure filled in.

Each handler finds the caller's session (one per connection), hands the work to the session's
ordered worker and turns the outcome into the procedure's result union. The ``*_ASYNC`` procedures
queue their work and send no reply; an error they meet is kept for the next synchronising call.
"""
from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, Callable

from ..cudafacts import curesult
from ..backends.base import BackendError
from ..protocol import Skeleton
from ..protocol import gen as P
from ..rpc import NO_REPLY, PayloadSink, admit_connection, current_call, current_connection_id
from ..rpc.context import current_socket
from . import arrays
from . import graphs
from . import ipc
from . import vmm
from . import peer_access
from . import placement
from . import service as svc
from . import shm
from .._select import load
from .limits import MAX_QUEUED_BYTES, MAX_QUEUED_CALLS
from .device_output import device_output, set_output_limit
from .context_limits import set_limit
from .peer import describe_peer, peer_credentials
from .service import CricketService
from .session import Session
from .status import _message, _name, server_status

log = logging.getLogger(__name__)
# The handlers of CR_MEMCPY_HTOD_PINNED and CR_MEMCPY_DTOH_PINNED (docs/copies.md, "A compiled
# handler for pinned copies").
_pinned_copy_handler = load("cricket._cext.pinned_copy_handler", "cricket.server.pinned_copy_handler")

_INT32_MAX = (1 << 31) - 1
#: What CR_MEMCPY_HTOD's payload sink is given: the bytes of cr_htod_args before its opaque's length.
HTOD_SINK_FIXED = P.cr_htod_args_FIXED_SIZE - 4
MAX_QUEUED = MAX_QUEUED_CALLS     # asynchronous calls a session may have queued before the connection waits
# A part of a shared-memory copy (one slot, cricket.client.shm.SLOT) runs on the loop while the
# session's worker is idle: a memcpy of ~0.6 ms, under the 1 ms GIL switch interval the loop would
# wait for a copying worker anyway, and it saves two thread wake-ups per part (D→H 64 MiB through
# the emu server ~4.7 → ~5.9 GB/s on the 2-core box).
SHM_INLINE_MAX = 4 << 20
# Largest host-to-device copy run on the event loop: one whole chunk of the protocol (a memcpy of
# some 0.2-0.5 ms). The copy holds the GIL wherever it runs, so handing it to the worker thread
# would not free the loop any sooner; it would only add two thread hops per chunk.
INLINE_COPY_MAX = P.CRICKET_MAX_INLINE

# Service calls that may run on the event loop while the session's worker is idle (so nothing
# queued can be overtaken): each names the backend attribute that allows it and, for a copy, which
# of the call's arguments (after the session) is its size and the most it may be (a bytes
# argument: its length); None: any call. ``quick_memory_ops``: copies and allocations finish at
# once (a device-to-host copy is a view of the backend's memory, whatever its size).
# ``idle_with_worker``: the device keeps no queue of its own, so with the worker idle all the
# session's work is done and synchronising calls and queries answer at once (each saves the two
# thread wake-ups of a trip to the worker: cudaDeviceSynchronize on emu ~130 → ~50 µs). The
# sizes are tuple entries, not predicates: a small copy's whole server side is some twenty
# Python calls, and one more per call shows (docs/copies.md, "The server's CPU per small copy").
_QUICK: dict[str, tuple[str, int | None, int]] = {
    "memcpy_htod": ("quick_memory_ops", 2, INLINE_COPY_MAX),       # (dst, stream, data)
    "memcpy_dtoh": ("quick_memory_ops", None, 0),
    "memcpy_htod_shm": ("quick_memory_ops", 3, SHM_INLINE_MAX),   # (dst, stream, offset, size)
    "memcpy_dtoh_shm": ("quick_memory_ops", 3, SHM_INLINE_MAX),   # (src, stream, offset, size)
    # (region, device address, stream, offset, size)
    "memcpy_htod_pinned": ("quick_memory_ops", 4, SHM_INLINE_MAX),
    "memcpy_dtoh_pinned": ("quick_memory_ops", 4, SHM_INLINE_MAX),
    "mem_alloc": ("quick_memory_ops", None, 0),
    "mem_free": ("quick_memory_ops", None, 0),
    "mem_get_info": ("quick_memory_ops", None, 0),
    "launch": ("idle_with_worker", None, 0),      # and Device.launch_is_quick (see _quick)
    "ctx_synchronize": ("idle_with_worker", None, 0),
    "stream_synchronize": ("idle_with_worker", None, 0),
    "stream_query": ("idle_with_worker", None, 0),
    "event_record": ("idle_with_worker", None, 0),
    "event_synchronize": ("idle_with_worker", None, 0),
    "event_query": ("idle_with_worker", None, 0),
    "event_elapsed_time": ("idle_with_worker", None, 0),
}


# The success result of each procedure whose result carries nothing else (``status`` 0): one
# instance each, never changed (the dispatch encodes it and lets it go), not one per call.
_SUCCEEDED: dict[type, Any] = {}


def _clamp(value: int) -> int:
    return max(-_INT32_MAX - 1, min(_INT32_MAX, int(value)))


def _peer(peer: Any) -> str:
    if isinstance(peer, tuple) and len(peer) >= 2:
        return f"{peer[0]}:{peer[1]}"
    return str(peer or "unix socket")


def _copied() -> Any:
    return P.cr_status_res(status=0)


class CricketProgram(Skeleton):
    """The served program. Pass :meth:`on_connect` / :meth:`on_disconnect` to the RPC server."""

    # NULL is answered by the RPC runtime's fast path (the generated method would raise
    # NotImplementedError on every ping, which the runtime then answers the same way).
    CR_NULL = None

    def __init__(self, service: CricketService) -> None:
        super().__init__()
        self.service = service
        self.sessions: dict[int, Session] = {}
        self.fd_inbox: shm.FdInbox | None = None     # opened at the first CR_SHM_TICKET
        ok = _SUCCEEDED.setdefault(P.cr_status_res, P.cr_status_res(status=0))
        quick_attr, _, most = _QUICK["memcpy_htod_pinned"]
        assert _QUICK["memcpy_dtoh_pinned"] == _QUICK["memcpy_htod_pinned"]
        copies = _pinned_copy_handler.PinnedCopies(self, quick_attr, most, ok)
        self.CR_MEMCPY_HTOD_PINNED = copies.htod
        self.CR_MEMCPY_DTOH_PINNED = copies.dtoh

    # --- connections -----------------------------------------------------------------

    def on_connect(self, connection_id: int, peer: Any) -> None:
        self.sessions[connection_id] = self.service.open_session(_peer(peer))

    def _note_peer(self) -> None:
        """Name the caller's peer once, from inside a call (a Unix socket's pid and user)."""
        session = self._session()
        if not session.greeted:
            credentials = peer_credentials(current_socket())
            session.peer = describe_peer(current_call().peer, credentials)
            session.peer_uid = credentials[1] if credentials else None

    def on_disconnect(self, connection_id: int) -> None:
        session = self.sessions.pop(connection_id, None)
        if session is not None:
            session.submit(shm.detach, session)      # the shared region goes with the connection
            self.service.close_session(session)

    def _session(self) -> Session:
        connection_id = current_connection_id()
        session = self.sessions.get(connection_id)
        if session is None:  # a call that raced the connect hook
            session = self.sessions[connection_id] = self.service.open_session()
        return session

    # --- running work on the session's worker ---------------------------------------

    def _call(self, result_cls: type, fn: Callable[..., Any], *args: Any,
              arm: str | None = None, convert: Callable[[Any], Any] | None = None,
              moved: tuple[str, str, int] | None = None) -> Any:
        """The result of ``fn(session, *args)`` as ``result_cls``: at once for a quick call (see
        ``_QUICK``) while the session's worker is idle (nothing queued can be overtaken), else a
        coroutine that waits for the worker. ``moved``: the bytes a copy moves once it succeeds
        (direction, path, size) for the session's stats."""
        session = self._session()
        name = fn.__name__
        session.counters[name] += 1
        if self._quick(session, name, args):
            started = time.perf_counter()
            try:
                value = fn(session, *args)
            except Exception as exc:
                return self._failed(session, result_cls, fn, exc)
            finally:
                self.service.stats.observe(name, time.perf_counter() - started)
            if moved:
                session.stats.copied[moved[0], moved[1]] += moved[2]     # SessionStats.moved
            if arm is None:
                ok = _SUCCEEDED.get(result_cls)
                if ok is None:
                    ok = _SUCCEEDED[result_cls] = result_cls(status=0)
                return ok
            return self._succeeded(result_cls, value, arm, convert)
        return self._on_worker(session, result_cls, fn, args, arm, convert, moved)

    def _quick(self, session: Session, name: str, args: tuple) -> bool:
        """Whether the call may run on the event loop now (see ``_QUICK``); a launch only when the
        backend says it ends at once (Device.launch_is_quick: a tiny kernel that cannot loop)."""
        quick = _QUICK.get(name)
        if quick is None or session.queued or not getattr(session.backend, quick[0], False):
            return False
        if quick[1] is not None:
            size = args[quick[1]]
            return (size if type(size) is int else len(size)) <= quick[2]
        return name != "launch" or self.service.launch_is_quick(session, *args)

    async def _on_worker(self, session: Session, result_cls: type, fn: Callable[..., Any],
                         args: tuple, arm: str | None, convert: Callable[[Any], Any] | None,
                         moved: tuple[str, str, int] | None = None) -> Any:
        started = time.perf_counter()
        try:
            value = await asyncio.wrap_future(session.submit(fn, session, *args))
        except Exception as exc:
            return self._failed(session, result_cls, fn, exc)
        finally:
            self.service.stats.observe(fn.__name__, time.perf_counter() - started)
        if moved:
            session.stats.moved(*moved)
        return self._succeeded(result_cls, value, arm, convert)

    @staticmethod
    def _succeeded(result_cls: type, value: Any, arm: str | None,
                   convert: Callable[[Any], Any] | None) -> Any:
        if arm is None:
            return result_cls(status=0)
        return result_cls(status=0, **{arm: convert(value) if convert else value})

    @staticmethod
    def _failed(session: Session, result_cls: type, fn: Callable[..., Any], exc: Exception) -> Any:
        if isinstance(exc, BackendError):
            if exc.code != svc.NEED_IMAGE:
                session.stats.failed(fn.__name__, exc.code, exc.message)
                log.debug("session %d: %s: %s", session.id, fn.__name__, exc)
            return result_cls(status=exc.code, message=_message(exc.message))
        session.stats.failed(fn.__name__, curesult.UNKNOWN, str(exc))
        log.error("session %d: %s failed unexpectedly", session.id, fn.__name__,
                  exc_info=(type(exc), exc, exc.__traceback__))
        return result_cls(status=curesult.UNKNOWN,
                          message=_message(f"{fn.__name__}: {type(exc).__name__}: {exc}"))

    def _async(self, fn: Callable[..., Any], *args: Any, moved: tuple[str, str, int] | None = None) -> Any:
        session = self._session()
        session.counters[fn.__name__] += 1

        def job() -> None:
            if session.closed:      # the client is gone: its queued work has no one to serve
                return
            try:
                fn(session, *args)
                if moved:
                    session.stats.moved(*moved)
            except BackendError as exc:
                session.stats.failed(fn.__name__, exc.code, exc.message)
                session.keep_async_error(exc)
            except Exception as exc:
                log.exception("session %d: %s failed unexpectedly", session.id, fn.__name__)
                session.keep_async_error(BackendError(curesult.UNKNOWN, f"{fn.__name__}: {exc}"))

        if fn.__name__ == "launch" and self._quick(session, "launch", args):
            job()                   # the worker is idle and the kernel ends at once: no thread hops
            return NO_REPLY
        nbytes = sum(len(a) for a in args if isinstance(a, (bytes, bytearray, memoryview)))
        future = session.submit(job, nbytes=nbytes)
        if session.queued > MAX_QUEUED or session.queued_bytes > MAX_QUEUED_BYTES:
            # Backpressure: while this call waits, the connection reads no further calls.
            return self._wait_then_no_reply(future)
        return NO_REPLY

    @staticmethod
    async def _wait_then_no_reply(future) -> Any:
        await asyncio.wrap_future(future)
        return NO_REPLY

    # --- HELLO, devices, errors -------------------------------------------------------

    def CR_HELLO(self, args):
        self._note_peer()
        def convert(h: svc.Hello):
            # HELLO succeeded (runs on the loop): the connection may now send records of any size
            # the protocol allows, and no HELLO timeout closes it.
            admit_connection()
            devices = [P.cr_device(name=_name(d.name), uuid=bytes(d.uuid[:16]).ljust(16, b"\0"),
                                   total_memory=d.total_memory,
                                   attributes=[P.cr_attribute(attribute=int(k), value=_clamp(v))
                                               for k, v in sorted(d.attributes.items())])
                       for d in h.devices]
            return P.cr_hello_ok(protocol=h.protocol, server=_name(h.server), backend=_name(h.backend),
                                 emulated=h.emulated, driver_version=h.driver_version,
                                 session=h.session, devices=devices)
        return self._call(P.cr_hello_res, self.service.hello, args.protocol, args.client, args.token,
                          args.backend, arm="ok", convert=convert)

    def CR_SET_DEVICE(self, index):
        return self._call(P.cr_status_res, self.service.set_device, index)

    def CR_CTX_SYNCHRONIZE(self):
        return self._call(P.cr_status_res, self.service.ctx_synchronize)

    def CR_DEVICE_RESET(self):
        return self._call(P.cr_status_res, self.service.device_reset)

    def CR_ERROR_STRING(self, status):
        return _message(svc.error_string(status))

    # --- memory -------------------------------------------------------------------------

    def CR_MEM_ALLOC(self, size):
        return self._call(P.cr_ptr_res, self.service.mem_alloc, size, arm="ptr")

    def CR_MEM_FREE(self, ptr):
        return self._call(P.cr_status_res, self.service.mem_free, ptr)

    def CR_MEM_GET_INFO(self):
        return self._call(P.cr_mem_info_res, self.service.mem_get_info, arm="info",
                          convert=lambda fi: P.cr_mem_info(free=fi[0], total=fi[1]))

    def receive_htod(self, fixed: bytes, size: int) -> PayloadSink | None:
        """CR_MEMCPY_HTOD's payload sink (cricket.rpc.sink; registered by cricket.server.app):
        while the session's worker is idle and the backend's device memory is host memory, the
        copy's bytes go from the socket straight into device memory. Whatever it is unsure of (a
        range outside the session's allocations, a stream of another session) it leaves to the
        ordinary handler, which answers with the error."""
        session = self._session()
        if session.queued or not getattr(session.backend, "quick_memory_ops", False):
            return None
        # the fields and, after them, the opaque's length as the wire carried it
        dst, stream, _ = P.unpack_cr_htod_args_fixed(fixed + size.to_bytes(4, "big"))
        try:
            view = self.service.memcpy_htod_view(session, dst, stream, size)
        except BackendError:
            return None
        if view is None:
            return None
        session.counters["memcpy_htod"] += 1
        session.stats.moved("htod", "socket", size)
        return PayloadSink(view, _copied)

    def CR_MEMCPY_HTOD(self, a):
        return self._call(P.cr_status_res, self.service.memcpy_htod, a.dst, a.stream, a.data,
                          moved=("htod", "socket", len(a.data)))

    def CR_MEMCPY_HTOD_ASYNC(self, a):
        return self._async(self.service.memcpy_htod, a.dst, a.stream, a.data,
                           moved=("htod", "socket", len(a.data)))

    def CR_MEMCPY_DTOH(self, a):
        return self._call(P.cr_data_res, self.service.memcpy_dtoh, a.src, a.size, a.stream, arm="data",
                          moved=("dtoh", "socket", a.size))

    def CR_MEMCPY_DTOD(self, a):
        return self._call(P.cr_status_res, self.service.memcpy_dtod, a.dst, a.src, a.size, a.stream,
                          moved=("dtod", "device", a.size))

    def CR_MEMCPY_DTOD_ASYNC(self, a):
        return self._async(self.service.memcpy_dtod, a.dst, a.src, a.size, a.stream,
                           moved=("dtod", "device", a.size))

    def CR_MEMSET(self, a):
        return self._call(P.cr_status_res, self.service.memset, a.dst, a.value, a.element_size,
                          a.count, a.stream)

    def CR_MEMSET_ASYNC(self, a):
        return self._async(self.service.memset, a.dst, a.value, a.element_size, a.count, a.stream)

    # --- shared memory (cricket.server.shm) ----------------------------------------------

    def CR_SHM_ATTACH(self, a):
        return self._call(P.cr_status_res, shm.shm_attach, a.path, a.size, current_call().peer)

    def CR_SHM_TICKET(self):
        if self.fd_inbox is None:
            try:
                self.fd_inbox = shm.FdInbox(asyncio.get_running_loop())
            except OSError as exc:
                log.warning("no descriptor inbox for shared memory: %s", exc)
                return P.cr_shm_ticket_res(status=curesult.NOT_SUPPORTED,
                                           message=_message(f"the server cannot take descriptors: {exc}"))
        return self._call(P.cr_shm_ticket_res, shm.shm_ticket, self.fd_inbox, current_call().peer,
                          arm="ticket", convert=lambda t: P.cr_shm_ticket(address=t[0], ticket=t[1]))

    def CR_SHM_ATTACH_FD(self, size):
        return self._call(P.cr_status_res, shm.shm_attach_fd, size, current_call().peer)

    def CR_MEMCPY_HTOD_SHM(self, a):
        return self._call(P.cr_status_res, shm.memcpy_htod_shm, a.dst, a.stream, a.offset, a.size,
                          moved=("htod", "shm", a.size))

    def CR_MEMCPY_HTOD_SHM_ASYNC(self, a):
        return self._async(shm.memcpy_htod_shm_async, a.dst, a.stream, a.offset, a.size, a.sequence,
                           moved=("htod", "shm", a.size))

    def CR_MEMCPY_DTOH_SHM(self, a):
        return self._call(P.cr_status_res, shm.memcpy_dtoh_shm, a.src, a.stream, a.offset, a.size,
                          moved=("dtoh", "shm", a.size))

    def CR_SHM_ATTACH_PINNED(self, size):
        return self._call(P.cr_pinned_res, shm.shm_attach_pinned, size, current_call().peer, arm="region")

    def CR_SHM_DETACH_PINNED(self, region):
        return self._call(P.cr_status_res, shm.shm_detach_pinned, region)

    # CR_MEMCPY_HTOD_PINNED and CR_MEMCPY_DTOH_PINNED: PinnedCopies (set in __init__).

    # --- modules -------------------------------------------------------------------------

    def CR_MODULE_LOAD(self, a):
        # A large image arrives as a view into the call's record; the backends and the image
        # cache keep bytes.
        return self._call(P.cr_module_res, self.service.module_load, bytes(a.hash), int(a.kind),
                          bytes(a.image), arm="module",
                          convert=lambda r: P.cr_module(handle=r.handle, prints=r.prints))

    def CR_MODULE_UNLOAD(self, handle):
        return self._call(P.cr_status_res, self.service.module_unload, handle)

    def CR_MODULE_GET_FUNCTION(self, a):
        def convert(r: svc.FunctionReply):
            i = r.info
            return P.cr_function(handle=r.handle, max_threads_per_block=i.max_threads_per_block,
                                 num_regs=i.num_regs, shared_size_bytes=i.shared_size_bytes,
                                 const_size_bytes=i.const_size_bytes,
                                 local_size_bytes=i.local_size_bytes, ptx_version=i.ptx_version,
                                 binary_version=i.binary_version, param_size=i.param_size,
                                 params=[P.cr_param(offset=p.offset, size=p.size, kind=p.kind) for p in i.params])
        return self._call(P.cr_function_res, self.service.module_get_function, a.module, a.name,
                          arm="function", convert=convert)

    def CR_MODULE_GET_GLOBAL(self, a):
        return self._call(P.cr_global_res, self.service.module_get_global, a.module, a.name,
                          arm="global_", convert=lambda g: P.cr_global(ptr=g[0], size=g[1]))

    # --- launch --------------------------------------------------------------------------

    @staticmethod
    def _launch_args(a) -> tuple:
        return (a.function, (a.grid.x, a.grid.y, a.grid.z), (a.block.x, a.block.y, a.block.z),
                a.shared_mem, a.stream, a.params)

    def CR_LAUNCH(self, a):
        return self._call(P.cr_status_res, self.service.launch, *self._launch_args(a))

    def CR_LAUNCH_ASYNC(self, a):
        return self._async(self.service.launch, *self._launch_args(a))

    def CR_LAUNCH_COOPERATIVE_ASYNC(self, a):
        return self._async(self.service.launch_cooperative, *self._launch_args(a))

    def CR_PEER_ACCESS(self, a):
        return self._call(P.cr_status_res, peer_access.peer_access, a.device, a.peer, a.enable)

    def CR_P2P_ATTRIBUTE(self, a):
        return self._call(P.cr_p2p_attribute_res, peer_access.p2p_attribute, a.src, a.dst, a.attribute, arm="value")

    def CR_PLACE_DEVICES(self, a):
        return self._call(P.cr_place_res, placement.place_devices, a.first, arm="ranges",
                          convert=lambda ranges: [P.cr_range(base=b, size=n) for b, n in ranges])

    # --- streams and events ----------------------------------------------------------------

    def CR_STREAM_CREATE(self, flags):
        return self._call(P.cr_handle_res, self.service.stream_create, flags, arm="handle")

    def CR_STREAM_DESTROY(self, handle):
        return self._call(P.cr_status_res, self.service.stream_destroy, handle)

    def CR_STREAM_SYNCHRONIZE(self, handle):
        return self._call(P.cr_status_res, self.service.stream_synchronize, handle)

    def CR_STREAM_QUERY(self, handle):
        return self._call(P.cr_status_res, self.service.stream_query, handle)

    def CR_STREAM_WAIT_EVENT(self, a):
        return self._call(P.cr_status_res, self.service.stream_wait_event, a.stream, a.event)

    def CR_STREAM_WAIT_EVENT_ASYNC(self, a):
        return self._async(self.service.stream_wait_event, a.stream, a.event)

    def CR_EVENT_CREATE(self, flags):
        return self._call(P.cr_handle_res, self.service.event_create, flags, arm="handle")

    def CR_EVENT_DESTROY(self, handle):
        return self._call(P.cr_status_res, self.service.event_destroy, handle)

    def CR_EVENT_RECORD(self, a):
        return self._call(P.cr_status_res, self.service.event_record, a.event, a.stream)

    def CR_EVENT_RECORD_ASYNC(self, a):
        return self._async(self.service.event_record, a.event, a.stream)

    def CR_EVENT_SYNCHRONIZE(self, handle):
        return self._call(P.cr_status_res, self.service.event_synchronize, handle)

    def CR_EVENT_QUERY(self, handle):
        return self._call(P.cr_status_res, self.service.event_query, handle)

    def CR_EVENT_ELAPSED_TIME(self, a):
        return self._call(P.cr_float_res, self.service.event_elapsed_time, a.start, a.end, arm="value")

    # --- device printf output ----------------------------------------------------------------

    def CR_DEVICE_OUTPUT(self):
        convert = lambda r: P.cr_output(text=r[0], dropped=r[1])   # noqa: E731
        session = self._session()
        if session.queued == 0:
            # Nothing queued can still print: answer on the loop, without a trip to the worker.
            session.counters["device_output"] += 1
            try:
                value = device_output(session)
            except Exception as exc:
                return self._failed(session, P.cr_output_res, device_output, exc)
            return self._succeeded(P.cr_output_res, value, "output", convert)
        return self._call(P.cr_output_res, device_output, arm="output", convert=convert)

    def CR_SET_OUTPUT_LIMIT(self, size):
        return self._call(P.cr_status_res, set_output_limit, size)

    def CR_CTX_SET_LIMIT(self, a):
        return self._call(P.cr_status_res, set_limit, a.limit, a.value, self.service.memory)

    # --- CUDA arrays, textures and surfaces (cricket.server.arrays) -----------------------------

    def CR_ARRAY_CREATE(self, a):
        def convert(made):
            base, levels = made
            return P.cr_array(base=base, levels=[P.cr_array_level(
                offset=lv.offset, pitch=lv.pitch, slice=lv.slice, width=lv.width, height=lv.height,
                depth=lv.depth * lv.layers) for lv in levels])
        return self._call(P.cr_array_res, arrays.array_create, self.service, a, arm="array", convert=convert)

    def CR_ARRAY_DESTROY(self, base):
        return self._call(P.cr_status_res, arrays.array_destroy, self.service, base)

    def CR_MEMCPY_3D(self, a):
        return self._call(P.cr_status_res, arrays.memcpy_3d, self.service, a)

    def CR_MEMCPY_3D_DTOH(self, a):
        return self._call(P.cr_data_res, arrays.memcpy_3d_dtoh, self.service, a, arm="data")

    def CR_TEXOBJ_CREATE(self, a):
        return self._call(P.cr_ptr_res, arrays.texobj_create, self.service, a, arm="ptr")

    def CR_TEXOBJ_DESTROY(self, handle):
        return self._call(P.cr_status_res, arrays.texobj_destroy, self.service, handle)

    # --- CUDA graphs (cricket.server.graphs) ---------------------------------------------------

    def CR_GRAPH_CREATE(self, a):
        return self._call(P.cr_handle_res, graphs.graph_create, self.service, a.nodes, arm="handle")

    def CR_GRAPH_LAUNCH(self, a):
        return self._call(P.cr_status_res, graphs.graph_launch, self.service, a.graph, a.stream, a.first, a.count)

    def CR_GRAPH_LAUNCH_ASYNC(self, a):
        return self._async(graphs.graph_launch, self.service, a.graph, a.stream, a.first, a.count)

    def CR_GRAPH_DESTROY(self, handle):
        return self._call(P.cr_status_res, graphs.graph_destroy, self.service, handle)
    # --- IPC between sessions (cricket.server.ipc) ------------------------------------------------

    def CR_IPC_GET_MEM_HANDLE(self, ptr):
        return self._call(P.cr_ipc_handle_res, ipc.get_mem_handle, self.service, ptr, arm="handle")

    def CR_IPC_OPEN_MEM_HANDLE(self, handle):
        return self._call(P.cr_global_res, ipc.open_mem_handle, self.service, handle, arm="global_",
                          convert=lambda g: P.cr_global(ptr=g[0], size=g[1]))

    def CR_IPC_CLOSE_MEM_HANDLE(self, ptr):
        return self._call(P.cr_status_res, ipc.close_mem_handle, self.service, ptr)

    def CR_IPC_GET_EVENT_HANDLE(self, handle):
        return self._call(P.cr_ipc_handle_res, ipc.get_event_handle, self.service, handle, arm="handle")

    def CR_IPC_OPEN_EVENT_HANDLE(self, handle):
        return self._call(P.cr_handle_res, ipc.open_event_handle, self.service, handle, arm="handle")

    # --- virtual memory management: address reservations (cricket.server.vmm) ------------------

    def CR_VMM_RESERVE(self, size):
        return self._call(P.cr_ptr_res, vmm.reserve, self.service, size, arm="ptr")

    def CR_VMM_FREE(self, ptr):
        return self._call(P.cr_status_res, vmm.release, self.service, ptr)

    # --- administration ----------------------------------------------------------------------

    def CR_LOAD_BACKEND(self, a):
        return self._call(P.cr_status_res, self.service.load_backend, a.type, a.spec)

    def CR_LIST_BACKENDS(self):
        def convert(rows):
            return [P.cr_backend_info(type=_name(r.type), loaded=r.loaded, available=r.available,
                                      reason=_message(r.reason or "")) for r in rows]
        return self._call(P.cr_backends_res, self.service.list_backends,
                          arm="backends", convert=convert)

    def _stats(self, collect: Callable[[], dict[str, int]]) -> Any:
        session = self._session()
        try:
            self.service.greeted(session)
        except BackendError as exc:
            return P.cr_stats_res(status=exc.code, message=_message(exc.message))
        return P.cr_stats_res(status=0, stats=[P.cr_stat(name=_name(k), value=max(0, int(v)))
                                               for k, v in collect().items()])

    def CR_SERVER_STATS(self):
        return self._stats(self.service.server_stats)

    def CR_SESSION_STATS(self):
        return self._stats(self._session().summary)

    def CR_SERVER_STATUS(self):
        session = self._session()
        try:
            status = server_status(self.service, session)
        except BackendError as exc:
            return P.cr_server_status_res(status=exc.code, message=_message(exc.message))
        if self.service.peers is not None:       # the other workers of `cricket server --workers N`
            return self.service.peers.with_their_sessions(status)
        return P.cr_server_status_res(status=0, server=status)
