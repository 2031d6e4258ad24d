"""What each cricket.x procedure does, in plain Python terms, for one session.

Every method here runs on the calling session's worker thread (never on the event loop), returns
plain values and raises :class:`BackendError` with the CUDA code on failure. The RPC layer
(:mod:`cricket.server.program`) turns arguments and results into the generated XDR types.
"""
from __future__ import annotations

import dataclasses
import hmac
import logging
import threading
import time
from collections import Counter
from typing import Any

from .. import __version__
from ..cudafacts import curesult
from ..backends.base import BackendError, DeviceProperties, FunctionInfo, ImageKind
from ..protocol import gen as P
from ..backends.registry import BackendAlreadyLoaded, BackendLoadError, BackendRegistry, BackendStatus
from . import device_copies
from .cooperative import launch_options as cooperative_launch_options
from .images import ImageCache
from .limits import MemoryBudget, return_free_memory
from .session import DeviceObject, FunctionRecord, ModuleRecord, Session
from .session_memory import SessionMemory
from .stats import ServerStats

log = logging.getLogger(__name__)

PROTOCOL_VERSION = P.CRICKET_PROTOCOL
NEED_IMAGE = -1          # CRICKET_NEED_IMAGE: the server lacks the image, send its bytes
MAX_INLINE = 4194304     # CRICKET_MAX_INLINE


@dataclasses.dataclass
class Hello:
    protocol: int
    server: str
    backend: str
    emulated: bool
    driver_version: int
    session: int
    devices: list[DeviceProperties]


@dataclasses.dataclass
class ModuleReply:
    handle: int
    prints: bool        # the module calls device printf: its client fetches the output


@dataclasses.dataclass
class FunctionReply:
    handle: int
    info: FunctionInfo


class CricketService:
    """Server-wide state (backends, the image cache, live sessions) and the procedures."""

    def __init__(self, registry: BackendRegistry, *, token: str = "", admin_token: str = "",
                 image_cache: ImageCache | None = None, allow_backend_import: bool = False,
                 memory: MemoryBudget | None = None, kernel_timeout: float | None = None) -> None:
        self.registry = registry
        self.memory = memory or MemoryBudget()      # device memory per session and in all
        self.kernel_timeout = kernel_timeout
        # Whether LOADBACKEND may name module:Class, importing any module on the server's path.
        self.allow_backend_import = allow_backend_import
        self.token = token
        self.admin_token = admin_token
        self.images = image_cache if image_cache is not None else ImageCache()   # (an empty one is falsy)
        self.sessions: dict[int, Session] = {}
        self._lock = threading.Lock()
        self.counters: Counter[str] = Counter()
        self.stats = ServerStats()
        # Set in each worker of `cricket server --workers N` (cricket.server.workers): the other
        # workers (their sessions for the status view), and why LOADBACKEND is refused.
        self.peers: Any = None
        self.load_refusal: str | None = None

    # --- sessions ------------------------------------------------------------

    def open_session(self, peer: str = "") -> Session:
        session = Session(peer, self.stats.session(), kernel_timeout=self.kernel_timeout)
        session.memory_account = SessionMemory(self.memory, session)
        with self._lock:
            self.sessions[session.id] = session
            self.counters["sessions_opened"] += 1
        log.info("session %d opened (%s)", session.id, peer or "unknown peer")
        return session

    def close_session(self, session: Session) -> None:
        """Free everything the session owns after its queued work, then stop its worker. Never blocks."""
        if session.closed:
            return
        session.closed = True
        session.cancel_kernels()

        def teardown() -> None:
            freed = session.free_all()
            self.memory.forget(session.id)
            return_free_memory()
            with self._lock:     # at once: a reader sees its calls among the live or the closed
                self.sessions.pop(session.id, None)
                self.counters["sessions_closed"] += 1
                self.stats.closed(session.stats)
            log.info("session %d (%s) closed; freed %s", session.id, session.peer or "unknown peer",
                     ", ".join(f"{v} {k}" for k, v in freed.items()) or "nothing")

        session.submit(teardown)
        session.worker.shutdown(wait=False)

    def snapshot(self) -> tuple[list[Session], Counter[str], Counter[tuple[str, str]]]:
        """The live sessions and the calls and bytes of the closed ones, taken together (so a
        session that closes meanwhile is counted once)."""
        with self._lock:
            return (list(self.sessions.values()), Counter(self.stats.closed_calls),
                    Counter(self.stats.closed_copied))

    def server_stats(self) -> dict[str, int]:
        sessions, closed_calls, _ = self.snapshot()
        counters = Counter(self.counters)
        counters.update({f"calls.{k}": v for k, v in closed_calls.items()})
        for s in sessions:
            counters.update({f"calls.{k}": v for k, v in dict(s.counters).items()})
        stats = {
            "sessions": len(sessions),
            "allocations": sum(len(s.allocations) for s in sessions),
            "allocated_bytes": sum(s.allocations.total_bytes for s in sessions),
            "modules": sum(len(s.modules) for s in sessions),
            "streams": sum(len(s.streams) for s in sessions),
            "events": sum(len(s.events) for s in sessions),
            "image_cache_images": len(self.images),
            "image_cache_bytes": self.images.total_bytes,
            "image_cache_hits": self.images.hits,
            "image_cache_misses": self.images.misses,
            "backends_loaded": len(self.registry.loaded()),
        }
        stats.update(counters)
        return stats

    # --- helpers -------------------------------------------------------------

    @staticmethod
    def greeted(session: Session) -> None:
        """Raise unless the session said HELLO (with an accepted token)."""
        if not session.greeted:
            raise BackendError(curesult.NOT_INITIALIZED, "call HELLO before any other procedure")

    @staticmethod
    def _ready(session: Session) -> None:
        if session.backend is None:
            raise BackendError(curesult.NOT_INITIALIZED, "call HELLO before any other procedure")

    # --- HELLO and devices -----------------------------------------------------

    def hello(self, session: Session, protocol: int, client: str, token: str, backend: str) -> Hello:
        if protocol != PROTOCOL_VERSION:
            raise BackendError(curesult.NOT_SUPPORTED,
                               f"client speaks cricket protocol {protocol}, this server speaks "
                               f"{PROTOCOL_VERSION}: use matching cricket versions")
        if self.token and not (_same(token, self.token) or _same(token, self.admin_token)):
            log.debug("session %d (%s): %s token from client %r",
                        session.id, session.peer or "unknown peer", "wrong" if token else "no", client)
            raise BackendError(curesult.NOT_PERMITTED,
                               "wrong or missing token: set CRICKET_TOKEN to the server's --token")
        session.admin = _same(token, self.admin_token)
        try:
            chosen = self.registry.get(backend)
        except KeyError as exc:
            if session.admin and not backend and not self.registry.loaded():
                # An administrator may connect to a server without backends to load one.
                log.info("session %d: admin HELLO on a server without backends", session.id)
                session.greeted = True
                return Hello(protocol=PROTOCOL_VERSION, server=f"cricket {__version__}", backend="",
                             emulated=False, driver_version=0, session=session.id, devices=[])
            raise BackendError(curesult.NO_DEVICE, str(exc.args[0])) from None
        if session.backend is not None and session.backend is not chosen and (
                len(session.allocations) or len(session.modules)):
            raise BackendError(curesult.INVALID_CONTEXT,
                               "this session already holds resources on another backend: reconnect to switch")
        if session.backend is not chosen:      # a placement was the other backend's (cricket.server.placement)
            session.placed, session.placement = False, 0
        session.backend = chosen
        session.greeted = True
        session.backend_type = chosen.type_name or backend
        session.device_index = 0
        session.client = client
        log.info("session %d: HELLO from %r (%s) on backend %s%s", session.id, client,
                 session.peer or "unknown peer", session.backend_type, " (admin)" if session.admin else "")
        return Hello(protocol=PROTOCOL_VERSION, server=f"cricket {__version__}",
                     backend=session.backend_type, emulated=bool(chosen.emulated),
                     driver_version=chosen.driver_version, session=session.id,
                     devices=chosen.devices())

    def set_device(self, session: Session, index: int) -> None:
        self._ready(session)
        count = len(session.backend.devices())
        if not 0 <= index < count:
            raise BackendError(curesult.INVALID_DEVICE,
                               f"device {index} does not exist (the backend has {count})")
        session.device_index = index

    def ctx_synchronize(self, session: Session) -> None:
        self._ready(session)
        session.raise_async_error()
        session.device.synchronize()

    def device_reset(self, session: Session) -> None:
        """cudaDeviceReset for one session: free everything it holds and forget its errors; other
        sessions are untouched. The session stays open and keeps its backend."""
        self._ready(session)
        freed = session.free_all()
        self.memory.forget(session.id)
        session.async_error = None
        log.info("session %d: device reset freed %s", session.id,
                 ", ".join(f"{v} {k}" for k, v in freed.items()) or "nothing")

    # --- memory ---------------------------------------------------------------

    def mem_alloc(self, session: Session, size: int) -> int:
        self._ready(session)
        if size == 0:
            raise BackendError(curesult.INVALID_VALUE, "cannot allocate 0 bytes")
        device = session.device
        emulated = bool(session.backend.emulated)
        self.memory.reserve(session.id, size, emulated)
        try:
            ptr = device.mem_alloc(size)
        except BaseException:
            self.memory.release(session.id, size)
            raise
        session.allocations.add(ptr, size)
        session.alloc_device[ptr] = device
        return ptr

    def mem_free(self, session: Session, ptr: int) -> None:
        self._ready(session)
        session.raise_async_error()
        if isinstance(session.alloc_device.get(ptr), _NoFree):
            raise BackendError(curesult.INVALID_VALUE,
                               f"{ptr:#x} is a module variable: it goes away with its module")
        size = session.allocations.remove(ptr)
        session.alloc_device.pop(ptr).mem_free(ptr)
        self.memory.release(session.id, size)

    def mem_get_info(self, session: Session) -> tuple[int, int]:
        self._ready(session)
        free, total = session.device.mem_get_info()
        return self.memory.share(session.id, free, total, bool(session.backend.emulated))

    def memcpy_htod(self, session: Session, dst: int, stream: int, data: bytes) -> None:
        self._ready(session)
        session.allocations.check(dst, len(data))
        session.device_of(dst).memcpy_htod(dst, data, session.stream(stream))

    def memcpy_htod_view(self, session: Session, dst: int, stream: int, size: int) -> memoryview | None:
        """Where a host-to-device copy's bytes may be received directly (a writable view of the
        device memory), or None when the backend has no such view. Checks what memcpy_htod checks."""
        self._ready(session)
        if size > MAX_INLINE:
            return None
        return session.device_for(dst, size).memcpy_htod_view(dst, size,
                                                              session.stream(stream) if stream else None)

    def memcpy_dtoh(self, session: Session, src: int, size: int, stream: int) -> bytes:
        self._ready(session)
        session.raise_async_error()
        if size > MAX_INLINE:
            raise BackendError(curesult.INVALID_VALUE,
                               f"one copy carries at most {MAX_INLINE} bytes; split larger copies")
        # A view where the backend offers one: the RPC server sends the reply before it runs this
        # session's next call, so nothing writes the memory while the view is being sent.
        return session.device_for(src, size).memcpy_dtoh_view(src, size,
                                                              session.stream(stream) if stream else None)

    def memcpy_dtod(self, session: Session, dst: int, src: int, size: int, stream: int) -> None:
        self._ready(session)
        session.allocations.check(dst, size)
        session.allocations.check(src, size)
        device_copies.memcpy_dtod(session, dst, src, size, stream)

    def memset(self, session: Session, dst: int, value: int, element_size: int, count: int,
               stream: int) -> None:
        self._ready(session)
        if element_size not in (1, 2, 4):
            raise BackendError(curesult.INVALID_VALUE, f"memset element size {element_size}: use 1, 2 or 4")
        session.allocations.check(dst, element_size * count)
        session.device_of(dst).memset(dst, value, element_size, count, session.stream(stream))

    # --- modules ---------------------------------------------------------------

    def module_load(self, session: Session, digest: bytes, kind: int, image: bytes) -> ModuleReply:
        """Load an image offered by hash; NEED_IMAGE when the server lacks its bytes."""
        self._ready(session)
        try:
            kind = ImageKind(kind)
        except ValueError:
            raise BackendError(curesult.INVALID_VALUE, f"unknown image kind {kind}") from None
        sent = bool(image)
        if sent:
            self.images.check(digest, image)
        else:
            cached = self.images.get(digest)
            if cached is None:
                raise BackendError(NEED_IMAGE, "the server does not hold this image: send its bytes")
            kind, image = cached
        device = session.device
        native = device.module_load(image, kind)
        if sent:                # kept only once it loaded: junk is not cached for anyone
            self.images.put(digest, kind, image)
        prints = self.images.calls_printf(digest)
        if prints is None:      # a property of the image: decided once per hash
            prints = bool(device.module_calls_printf(native, image))
            self.images.note_calls_printf(digest, prints)
        handle = session.modules.add(ModuleRecord(native=native, device=device, image_hash=digest))
        return ModuleReply(handle=handle, prints=prints)

    def module_unload(self, session: Session, handle: int) -> None:
        self._ready(session)
        record = session.modules.pop(handle)
        for fh, fn in session.functions.items():
            if fn.module_handle == handle:
                session.functions.pop(fh)
        for ptr in record.variables:
            session.allocations.remove(ptr)
            session.alloc_device.pop(ptr, None)
        record.device.module_unload(record.native)

    def module_get_function(self, session: Session, module: int, name: str) -> FunctionReply:
        self._ready(session)
        record = session.modules.get(module)
        info = record.device.module_get_function(record.native, name)
        handle = session.functions.add(FunctionRecord(info=info, module_handle=module, name=name))
        return FunctionReply(handle=handle, info=info)

    def module_get_global(self, session: Session, module: int, name: str) -> tuple[int, int]:
        self._ready(session)
        record = session.modules.get(module)
        ptr, size = record.device.module_get_global(record.native, name)
        # The variable belongs to this session's module instance: let copies reach it.
        if size:
            try:
                session.allocations.check(ptr, size)
            except BackendError:
                session.allocations.add(ptr, size)
                session.alloc_device[ptr] = _NoFree(record.device)
                record.variables.append(ptr)
        return ptr, size

    # --- launch ----------------------------------------------------------------

    def launch_is_quick(self, session: Session, function: int, grid: tuple[int, int, int],
                        block: tuple[int, int, int], shared_mem: int, stream: int, params: bytes) -> bool:
        """Whether the backend says this launch ends at once (it may then run on the event loop);
        False for anything it cannot tell, which the ordinary path then answers."""
        try:
            record = session.functions.get(function)
            device = session.modules.get(record.module_handle).device
            return bool(device.launch_is_quick(record.info.native, grid, block, shared_mem))
        except Exception:
            return False

    def launch(self, session: Session, function: int, grid: tuple[int, int, int],
               block: tuple[int, int, int], shared_mem: int, stream: int, params: bytes,
               cooperative: bool = False) -> None:
        self._ready(session)
        record = session.functions.get(function)
        if record.info.param_size and len(params) != record.info.param_size:
            raise BackendError(curesult.INVALID_VALUE,
                               f"kernel {record.name} takes {record.info.param_size} bytes of parameters, "
                               f"got {len(params)}")
        if any(d == 0 for d in (*grid, *block)):
            raise BackendError(curesult.INVALID_VALUE, f"empty launch: grid {grid}, block {block}")
        module = session.modules.get(record.module_handle)
        device = module.device
        extra = cooperative_launch_options(device) if cooperative else {}
        started = time.perf_counter()
        try:
            if getattr(device, "captures_output", False):
                # printf lines go to this session, also when the device object is shared
                device.launch(record.info.native, grid, block, shared_mem, session.stream(stream), params,
                              output=session.output, **extra)
            else:
                device.launch(record.info.native, grid, block, shared_mem, session.stream(stream), params, **extra)
        finally:
            session.stats.launched(session.backend_type, time.perf_counter() - started)

    def launch_cooperative(self, session: Session, *args: Any) -> None:
        """cudaLaunchCooperativeKernel: every block of the grid resident at once (grid.sync())."""
        self.launch(session, *args, cooperative=True)

    # --- streams and events -------------------------------------------------------

    def stream_create(self, session: Session, flags: int) -> int:
        self._ready(session)
        device = session.device
        return session.streams.add(DeviceObject(device.stream_create(flags), device))

    def stream_destroy(self, session: Session, handle: int) -> None:
        self._ready(session)
        st = session.streams.pop(handle)
        st.device.stream_destroy(st.native)

    def stream_synchronize(self, session: Session, handle: int) -> None:
        self._ready(session)
        session.raise_async_error()
        if handle == 0:
            session.device.stream_synchronize(None)
        else:
            st = session.streams.get(handle)
            st.device.stream_synchronize(st.native)

    def stream_query(self, session: Session, handle: int) -> None:
        """Returns when the stream is idle; raises NOT_READY while it is busy."""
        self._ready(session)
        session.raise_async_error()
        done = session.device.stream_query(session.stream(handle))
        if not done:
            raise BackendError(curesult.NOT_READY, "the stream still has work")

    def stream_wait_event(self, session: Session, stream: int, event: int) -> None:
        self._ready(session)
        ev = session.events.get(event)
        session.device.stream_wait_event(session.stream(stream), ev.native)

    def event_create(self, session: Session, flags: int) -> int:
        self._ready(session)
        device = session.device
        return session.events.add(DeviceObject(device.event_create(flags), device))

    def event_destroy(self, session: Session, handle: int) -> None:
        self._ready(session)
        ev = session.events.pop(handle)
        ev.device.event_destroy(ev.native)

    def event_record(self, session: Session, event: int, stream: int) -> None:
        self._ready(session)
        ev = session.events.get(event)
        ev.device.event_record(ev.native, session.stream(stream))

    def event_synchronize(self, session: Session, handle: int) -> None:
        self._ready(session)
        session.raise_async_error()
        ev = session.events.get(handle)
        ev.device.event_synchronize(ev.native)

    def event_query(self, session: Session, handle: int) -> None:
        self._ready(session)
        session.raise_async_error()
        ev = session.events.get(handle)
        if not ev.device.event_query(ev.native):
            raise BackendError(curesult.NOT_READY, "the event has not completed")

    def event_elapsed_time(self, session: Session, start: int, end: int) -> float:
        self._ready(session)
        a = session.events.get(start)
        b = session.events.get(end)
        return a.device.event_elapsed_time(a.native, b.native)

    # --- administration ------------------------------------------------------------

    def load_backend(self, session: Session, type_name: str, spec: str) -> None:
        self.greeted(session)
        if not session.admin:
            raise BackendError(curesult.NOT_PERMITTED,
                               "LOADBACKEND needs the admin token: start the server with --admin-token "
                               "and send it as the HELLO token")
        if self.load_refusal:
            raise BackendError(curesult.NOT_SUPPORTED, self.load_refusal)
        if ":" in type_name and not self.allow_backend_import:
            # Importing a module runs its code: only the operator may allow that.
            log.warning("session %d: LOADBACKEND %s refused: importing module:Class needs "
                        "--allow-backend-import", session.id, type_name)
            raise BackendError(curesult.NOT_PERMITTED,
                               f"LOADBACKEND {type_name}: loading a backend by module:Class imports "
                               "code on the server and needs `cricket server --allow-backend-import`; "
                               "without it load a backend by its entry-point name "
                               "(`cricket server --list-backends`)")
        try:
            self.registry.load(type_name, spec)
        except BackendAlreadyLoaded as exc:
            log.warning("LOADBACKEND %s refused: %s", type_name, exc)
            raise BackendError(curesult.NOT_PERMITTED, str(exc)) from None
        except BackendLoadError as exc:
            log.error("LOADBACKEND %s failed: %s", type_name, exc)
            cause = exc.__cause__
            code = cause.code if isinstance(cause, BackendError) else curesult.NOT_FOUND
            raise BackendError(code, str(exc)) from None

    def list_backends(self, session: Session) -> list[BackendStatus]:
        self.greeted(session)
        return self.registry.status()


def _same(given: str, expected: str) -> bool:
    """Token comparison in constant time; an empty expected token matches nothing."""
    return bool(expected) and hmac.compare_digest(given.encode(), expected.encode())


class _NoFree:
    """Stands in for a device in the allocation table for module variables: they go with the module."""

    stands_in = True        # Session.device_for: the device is .device

    def __init__(self, device: Any) -> None:
        self.device = device

    def mem_free(self, ptr: int) -> None:
        pass


def error_string(code: int) -> str:
    """CR_ERROR_STRING: ``NAME: description``."""
    return f"{curesult.error_name(code)}: {curesult.error_string(code)}"
