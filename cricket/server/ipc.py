"""CUDA IPC between the sessions of one server: memory handles and event handles.

A handle is 64 random bytes (``secrets``): it names one allocation (or event) of the session that
exported it, and nothing can be learned or guessed from it. Who may open it: another session of
this server whose peer user (``SO_PEERCRED`` on the Unix socket) is the exporter's; over TCP,
where the server knows no user, any other session that passed the server's token check (the
token is the trust boundary there). The exporting session itself may not open it, as CUDA refuses
a handle opened in the process that made it (201: ``cudaErrorDeviceUninitialized`` /
``CUDA_ERROR_INVALID_CONTEXT``).

Memory. Each session has a device of its own (on emu, its own arena), so the importer gets an
allocation of the same size in its own device memory, counted in its memory budget, and the two
are kept coherent around every operation of the importer: before it, the exporter's bytes are
copied in; after it, the pages the operation changed are copied back. The exporter's own work
needs nothing: it uses the memory itself. CUDA asks processes to order their accesses (events,
host synchronisation), and under that rule both sides see each other's writes. Operations the
server would run on the event loop with no worker (quick copies) are kept on the worker while a
session has memory open, so that none escapes the copies. When the exporter frees the memory or
goes away, the import stops being refreshed (CUDA: undefined behaviour); it is freed by
``cudaIpcCloseMemHandle`` or with the importing session.

Events. An opened event is the exporter's event: waiting on it first waits until the exporter's
session has run what it had queued (its record among it), then asks the exporter's device.
"""
from __future__ import annotations

import logging
import secrets
import threading
import weakref
from dataclasses import dataclass, field
from typing import Any

from ..backends.base import BackendError
from ..cudafacts import curesult
from .session import DeviceObject, Session

log = logging.getLogger(__name__)

HANDLE_SIZE = 64                        # cudaIpcMemHandle_t / cudaIpcEventHandle_t: char reserved[64]
PAGE = 4096
MAX_EXPORTS = 4096                      # live handles one session may hold
SWEEP_AT = 4 * MAX_EXPORTS              # handles of the server before the dead ones are forgotten
BARRIER_TIMEOUT = 600.0                 # seconds an opened event waits for the exporter's queue


@dataclass
class Export:
    """An allocation or event a session exported."""

    owner: "weakref.ref[Session]"
    owner_uid: int | None
    ptr: int = 0                          # memory: the allocation
    size: int = 0
    serial: int | None = None             # memory: which allocation at ``ptr`` (Allocations.serial)
    event: DeviceObject | None = None     # event: the exporter's event

    def session(self) -> Session | None:
        s = self.owner()
        return None if s is None or s.closed else s

    def memory_alive(self) -> bool:
        s = self.session()
        if s is None:
            return False
        return s.allocations.serial(self.ptr) == self.serial


@dataclass
class Import:
    """Memory a session opened: its own copy at ``local`` and the export it mirrors."""

    export: Export
    local: int
    references: int = 1
    snapshot: bytes = b""                 # the bytes copied in before the running operation


@dataclass
class _SessionIpc:
    imports: dict[int, Import] = field(default_factory=dict)     # local address -> import
    by_handle: dict[bytes, int] = field(default_factory=dict)    # handle -> local address
    exports: int = 0


# In a worker of `cricket server --workers N`: every handle starts with the server's tag and the
# worker's number, so a handle taken to another worker is told apart from a wrong one.
_mark = b""
OTHER_WORKER = ("this IPC handle belongs to a session on another worker process of this server "
                "(cricket server --workers N); IPC handles work between sessions of one worker only: "
                "run the server with --workers 1 to share memory and events between processes")


def mark_handles(server_tag: bytes, worker: int) -> None:
    """Make this process's handles start with ``server_tag`` and ``worker`` (one byte)."""
    global _mark
    _mark = server_tag + bytes([worker])


def _from_another_worker(handle: bytes) -> bool:
    tag = _mark[:-1]
    return bool(_mark) and handle.startswith(tag) and handle[len(tag):len(_mark)] != _mark[-1:]


_exports: dict[bytes, Export] = {}
_lock = threading.Lock()
_sessions: "weakref.WeakKeyDictionary[Session, _SessionIpc]" = weakref.WeakKeyDictionary()


def _state(session: Session) -> _SessionIpc:
    st = _sessions.get(session)
    if st is None:
        st = _sessions[session] = _SessionIpc()
    return st


def _sweep() -> None:
    """Forget the handles whose exporter is gone or whose memory it freed (they open nothing)."""
    with _lock:
        for handle in [h for h, e in _exports.items()
                       if e.session() is None or (e.event is None and not e.memory_alive())]:
            del _exports[handle]
        counts: dict[Session, int] = {}
        for e in _exports.values():
            owner = e.owner()
            counts[owner] = counts.get(owner, 0) + 1
        for session, st in list(_sessions.items()):
            st.exports = counts.get(session, 0)


def _new_handle(session: Session, export: Export) -> bytes:
    st = _state(session)
    if st.exports >= MAX_EXPORTS or len(_exports) >= SWEEP_AT:
        _sweep()
    if st.exports >= MAX_EXPORTS:
        raise BackendError(curesult.OUT_OF_MEMORY, f"a session may hold at most {MAX_EXPORTS} live IPC handles")
    handle = _mark + secrets.token_bytes(HANDLE_SIZE - len(_mark))
    with _lock:
        _exports[handle] = export
        st.exports += 1
    return handle


def _find(session: Session, handle: bytes, kind: str) -> Export:
    """The export ``handle`` names, if ``session`` may open it."""
    with _lock:
        export = _exports.get(bytes(handle))
    owner = export.session() if export is not None else None
    if export is None and _from_another_worker(bytes(handle)):
        raise BackendError(curesult.NOT_SUPPORTED, OTHER_WORKER)
    if export is None or owner is None or (kind == "memory") != (export.event is None):
        raise BackendError(curesult.INVALID_HANDLE, f"no {kind} IPC handle of a live session matches")
    if owner is session:
        raise BackendError(curesult.INVALID_CONTEXT, f"an IPC {kind} handle cannot be opened by the "
                           "process that exported it")
    if owner.peer_uid != session.peer_uid:
        log.warning("session %d: refused an IPC handle of session %d (another user)", session.id, owner.id)
        raise BackendError(curesult.INVALID_HANDLE, f"no {kind} IPC handle of a live session matches")
    return export


# --- memory -----------------------------------------------------------------------------

def get_mem_handle(session: Session, service: Any, ptr: int) -> bytes:
    """cudaIpcGetMemHandle: ``ptr`` is the base of an allocation of the session."""
    service._ready(session)
    size = dict(session.allocations.items()).get(ptr)
    if size is None:
        raise BackendError(curesult.INVALID_VALUE, f"{ptr:#x} is not the base of an allocation of this session")
    return _new_handle(session, Export(weakref.ref(session), session.peer_uid, ptr=ptr, size=size,
                                       serial=session.allocations.serial(ptr)))


def open_mem_handle(session: Session, service: Any, handle: bytes) -> tuple[int, int]:
    """cudaIpcOpenMemHandle: (local address, size); a handle opened again gets the same address."""
    service._ready(session)
    st = _state(session)
    local = st.by_handle.get(bytes(handle))
    if local is not None:
        st.imports[local].references += 1
        return local, st.imports[local].export.size
    export = _find(session, handle, "memory")
    if not export.memory_alive():
        raise BackendError(curesult.INVALID_HANDLE, "the exported memory has been freed")
    local = service.mem_alloc(session, export.size)
    imp = Import(export, local)
    _copy_in(session, imp)
    st.imports[local] = imp
    st.by_handle[bytes(handle)] = local
    _keep_on_worker(session, True)
    log.debug("session %d: opened IPC memory %#x of session %d at %#x (%d bytes)", session.id, export.ptr,
              export.owner().id, local, export.size)
    return local, export.size


def close_mem_handle(session: Session, service: Any, local: int) -> None:
    """cudaIpcCloseMemHandle: the last close frees the local copy."""
    service._ready(session)
    st = _state(session)
    imp = st.imports.get(local)
    if imp is None:
        raise BackendError(curesult.INVALID_VALUE, f"{local:#x} is not IPC memory this session opened")
    imp.references -= 1
    if imp.references:
        return
    del st.imports[local]
    st.by_handle = {h: a for h, a in st.by_handle.items() if a != local}
    service.mem_free(session, local)
    if not st.imports:
        _keep_on_worker(session, False)


def _copy_in(session: Session, imp: Import) -> None:
    export = imp.export
    owner = export.session()
    if owner is None or not export.memory_alive() or imp.local not in session.alloc_device:
        imp.snapshot = b""
        return
    data = bytes(owner.alloc_device[export.ptr].memcpy_dtoh(export.ptr, export.size, None))
    session.alloc_device[imp.local].memcpy_htod(imp.local, data, None)
    imp.snapshot = data


def _copy_back(session: Session, imp: Import) -> None:
    """The pages of the local copy that the operation changed go to the exporter's memory."""
    if not imp.snapshot:
        return
    export = imp.export
    owner = export.session()
    if owner is None or not export.memory_alive() or imp.local not in session.alloc_device:
        return
    now = bytes(session.alloc_device[imp.local].memcpy_dtoh(imp.local, export.size, None))
    before, size = imp.snapshot, export.size
    device = owner.alloc_device[export.ptr]
    start = None
    for off in range(0, size + PAGE, PAGE):
        changed = off < size and now[off:off + PAGE] != before[off:off + PAGE]
        if changed and start is None:
            start = off
        elif not changed and start is not None:
            device.memcpy_htod(export.ptr + start, now[start:off], None)
            start = None
    imp.snapshot = b""


class _CoherentWorker:
    """The session's worker while it has IPC memory open: each operation runs between a copy in
    and a copy back of every import."""

    def __init__(self, session: Session, inner: Any) -> None:
        self.session = session
        self.inner = inner

    def submit(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        session = self.session

        def run() -> Any:
            imports = list(_state(session).imports.values())
            for imp in imports:
                _copy_in(session, imp)
            try:
                return fn(*args, **kwargs)
            finally:
                for imp in imports:
                    if imp.local in _state(session).imports:
                        _copy_back(session, imp)
        return self.inner.submit(run)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def _keep_on_worker(session: Session, on: bool) -> None:
    """Route every operation of ``session`` through the coherent worker (on) or back (off). One
    permanent count in ``session.queued`` keeps the server's quick paths (run on the event loop
    while nothing is queued) off, so no copy reaches device memory around the coherence."""
    wrapped = isinstance(session.worker, _CoherentWorker)
    if on and not wrapped:
        session.worker = _CoherentWorker(session, session.worker)
        with session._queue_lock:
            session.queued += 1
    elif not on and wrapped:
        session.worker = session.worker.inner
        with session._queue_lock:
            session.queued -= 1


# --- events -----------------------------------------------------------------------------

def get_event_handle(session: Session, service: Any, handle: int) -> bytes:
    """cudaIpcGetEventHandle of an event of the session (the client checked its flags)."""
    service._ready(session)
    ev = session.events.get(handle)
    return _new_handle(session, Export(weakref.ref(session), session.peer_uid, event=ev))


class _ImportedEvents:
    """The 'device' of an opened event: the exporter's device, after the exporter's queue."""

    def __init__(self, export: Export) -> None:
        self.export = export

    def _owner_ready(self) -> Session | None:
        owner = self.export.session()
        if owner is not None:
            try:
                owner.submit(lambda: None).result(BARRIER_TIMEOUT)
            except Exception as exc:      # the exporter went away meanwhile
                log.debug("waiting for the exporter of an IPC event: %s", exc)
                return None
        return owner

    def event_synchronize(self, native: Any) -> None:
        if self._owner_ready() is not None:
            self.export.event.device.event_synchronize(native)

    def event_query(self, native: Any) -> bool:
        owner = self.export.session()
        if owner is None:
            return True
        pinned = 1 if isinstance(owner.worker, _CoherentWorker) else 0     # _keep_on_worker's count
        return owner.queued == pinned and self.export.event.device.event_query(native)

    def event_record(self, native: Any, stream: Any) -> None:
        self.export.event.device.event_record(native, None)

    def event_destroy(self, native: Any) -> None:
        pass                                # the exporter's event stays the exporter's

    def event_elapsed_time(self, start: Any, end: Any) -> float:
        raise BackendError(curesult.INVALID_HANDLE, "IPC events have no timing")


def open_event_handle(session: Session, service: Any, handle: bytes) -> int:
    """cudaIpcOpenEventHandle: a handle of this session for the exporter's event."""
    service._ready(session)
    export = _find(session, handle, "event")
    return session.events.add(DeviceObject(export.event.native, _ImportedEvents(export)))
