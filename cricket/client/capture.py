"""Stream capture: work issued to a capturing stream becomes nodes of a graph instead of going out.

A capture begins on one stream (cudaStreamBeginCapture) and spreads to other streams that wait on
an event recorded in a capturing stream; each stream of it keeps its current dependencies (the
nodes its next node depends on). cudaStreamEndCapture on the origin stream ends it for all of its
streams and hands over the graph, once every other stream has joined back into the origin stream.

The capture modes (cudaStreamCaptureMode, per capture and per thread through
cudaThreadExchangeStreamCaptureMode) decide which threads may make potentially unsafe calls (a
synchronous copy or memset, an allocation or free, a device or legacy-stream synchronisation)
while a capture runs: such a call fails with cudaErrorStreamCaptureUnsupported and invalidates the
captures it concerns, whose end then fails with cudaErrorStreamCaptureInvalidated.

Captured state is keyed by the server's stream handle, which both API faces share. The face
modules (``graphs_runtime``, ``graphs_driver``) register :func:`hook` s for the operations that can
be captured or are unsafe; they stand in the face tables only while a capture runs.
"""
from __future__ import annotations

import itertools
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from cricket.client import graphs
from cricket.client.errors import ERR_INVALID_VALUE, CudaRuntimeError
from cricket.client.faces import Face
from cricket.client.graphs import Graph, Node
from cricket.client.runtime import RUNTIME as rt
from cricket.cudafacts.cudart_errors import CODES

log = logging.getLogger(__name__)

GLOBAL, THREAD_LOCAL, RELAXED = 0, 1, 2             # cudaStreamCaptureMode
STATUS_NONE, STATUS_ACTIVE, STATUS_INVALIDATED = 0, 1, 2   # cudaStreamCaptureStatus
ADD_DEPENDENCIES, SET_DEPENDENCIES = 0, 1           # cudaStreamUpdateCaptureDependencies flags
ERR_UNSUPPORTED = CODES["cudaErrorStreamCaptureUnsupported"]
ERR_INVALIDATED = CODES["cudaErrorStreamCaptureInvalidated"]
ERR_MERGE = CODES["cudaErrorStreamCaptureMerge"]
ERR_UNMATCHED = CODES["cudaErrorStreamCaptureUnmatched"]
ERR_UNJOINED = CODES["cudaErrorStreamCaptureUnjoined"]
ERR_WRONG_THREAD = CODES["cudaErrorStreamCaptureWrongThread"]
ERR_CAPTURED_EVENT = CODES["cudaErrorCapturedEvent"]
ERR_ILLEGAL_STATE = CODES["cudaErrorIllegalState"]
ERR_IMPLICIT = CODES["cudaErrorStreamCaptureImplicit"]

_ids = itertools.count(1)


@dataclass(eq=False)
class Capture:
    graph: Graph
    mode: int
    thread: int
    origin: int                                      # server handle of the stream it began on
    tails: dict[int, list[Node]] = field(default_factory=dict)   # server stream -> its dependencies
    # its server streams that are cudaStreamNonBlocking (told by the application's stream: server
    # handles of two servers may be the same)
    nonblocking: set[int] = field(default_factory=set)
    invalidated: bool = False
    id: int = field(default_factory=lambda: next(_ids))


CAPTURES: dict[int, Capture] = {}                    # server stream -> the capture it is part of
EVENTS: dict[int, tuple[Capture, list[Node]]] = {}   # application event -> capture, nodes at its record
_lock = threading.RLock()


class _ThreadMode(threading.local):
    mode = GLOBAL


_thread = _ThreadMode()


def exchange_mode(mode: int) -> int:
    """cudaThreadExchangeStreamCaptureMode: set the calling thread's mode, return the old one."""
    if mode not in (GLOBAL, THREAD_LOCAL, RELAXED):
        raise CudaRuntimeError(ERR_INVALID_VALUE, f"capture mode {mode} does not exist")
    old, _thread.mode = _thread.mode, mode
    return old


def begin(stream: int, mode: int) -> Capture:
    if mode not in (GLOBAL, THREAD_LOCAL, RELAXED):
        raise CudaRuntimeError(ERR_INVALID_VALUE, f"capture mode {mode} does not exist")
    server = rt.stream(stream)
    if server == 0:
        raise CudaRuntimeError(ERR_UNSUPPORTED, "the legacy default stream cannot be captured")
    with _lock:
        if server in CAPTURES:
            raise CudaRuntimeError(ERR_ILLEGAL_STATE, "the stream is already capturing")
        cap = Capture(graphs.create_graph(), mode, threading.get_ident(), server)
        cap.tails[server] = []
        _join(cap, stream, server)
        if not CAPTURES:
            _arm()
        CAPTURES[server] = cap
    return cap


def _join(cap: Capture, stream: int, server: int) -> None:
    """Application stream ``stream`` (server stream ``server``) is now part of ``cap``."""
    if stream in rt.nonblocking:
        cap.nonblocking.add(server)


def _finish(cap: Capture) -> None:
    for s in [s for s, c in CAPTURES.items() if c is cap]:
        del CAPTURES[s]
    for e in [e for e, (c, _) in EVENTS.items() if c is cap]:
        del EVENTS[e]
    if not CAPTURES:
        _disarm()


def _ancestors(nodes: list[Node]) -> set[int]:
    seen: set[int] = set()
    todo = list(nodes)
    while todo:
        n = todo.pop()
        if id(n) not in seen:
            seen.add(id(n))
            todo.extend(n.deps)
    return seen


def end(stream: int) -> Graph:
    """cudaStreamEndCapture: the captured graph (the caller owns it)."""
    server = rt.stream(stream)
    with _lock:
        cap = CAPTURES.get(server)
        if cap is None:
            raise CudaRuntimeError(ERR_ILLEGAL_STATE, "the stream is not capturing")
        if cap.origin != server:
            cap.invalidated = True
            raise CudaRuntimeError(ERR_UNMATCHED, "the capture must end in the stream it began in")
        if cap.mode != RELAXED and cap.thread != threading.get_ident():
            raise CudaRuntimeError(ERR_WRONG_THREAD, "the capture began in another thread")
        _finish(cap)
        joined = _ancestors(cap.tails[server])
        unjoined = any(not _ancestors(t) <= joined for s, t in cap.tails.items() if s != server)
        if cap.invalidated or unjoined:
            graphs.destroy_graph(cap.graph.handle)
            if cap.invalidated:
                raise CudaRuntimeError(ERR_INVALIDATED, "the capture was invalidated by an earlier error")
            raise CudaRuntimeError(ERR_UNJOINED, "a stream of the capture did not join back into its origin "
                                   "stream (record an event there and wait for it in the origin stream)")
    return cap.graph


def of(stream: int) -> Capture | None:
    """The capture application stream ``stream`` is part of, or None."""
    if not CAPTURES:
        return None
    return CAPTURES.get(rt.stream(stream))


def status(stream: int) -> tuple[int, Capture | None]:
    cap = of(stream)
    if cap is None:
        return STATUS_NONE, None
    return (STATUS_INVALIDATED if cap.invalidated else STATUS_ACTIVE), cap


def add(stream: int, kind: int, params: tuple) -> bool:
    """Capture an operation on ``stream`` as a node; False when the stream is not capturing."""
    server = rt.stream(stream)
    with _lock:
        cap = CAPTURES.get(server)
        if cap is None:
            return False
        if cap.invalidated:
            raise CudaRuntimeError(ERR_INVALIDATED, "the stream's capture was invalidated")
        node = cap.graph.add(kind, params, cap.tails[server])
        cap.tails[server] = [node]
    return True


def add_graph(stream: int, g: Graph) -> bool:
    """A graph launched into a capturing stream becomes a child graph node."""
    return add(stream, graphs.CHILD, (g.clone(register=False)[0],))


def captured(stream: int, kind: int, params: tuple, empty: bool = False) -> int | None:
    """A hook's answer for an asynchronous operation on ``stream``: 0 when it became a node (an
    ``empty`` one is dropped), None when the stream does not capture and the operation runs."""
    if of(stream) is None:
        check_implicit(stream)
        return None
    if not empty:
        add(stream, kind, params)
    return 0


def check_implicit(stream: int) -> None:
    """Work on the legacy stream while a blocking stream (not cudaStreamNonBlocking) captures would
    depend on the capture: cudaErrorStreamCaptureImplicit, and those captures are invalidated."""
    if not CAPTURES or rt.stream(stream) != 0:
        return
    with _lock:
        hit = {id(c): c for server, c in CAPTURES.items() if server not in c.nonblocking}
        if not hit:
            return
        for c in hit.values():
            c.invalidated = True
    raise CudaRuntimeError(ERR_IMPLICIT, "work on the legacy stream while a blocking stream captures")


def record_event(event: int, stream: int, *flags: int) -> int | None:
    """An event recorded in a capturing stream marks the stream's current dependencies (no node):
    0, or None when the stream does not capture."""
    server = rt.stream(stream)
    rt.event(event)
    with _lock:
        cap = CAPTURES.get(server)
        if cap is None:
            EVENTS.pop(event, None)
            return None
        if cap.invalidated:
            raise CudaRuntimeError(ERR_INVALIDATED, "the stream's capture was invalidated")
        EVENTS[event] = (cap, list(cap.tails[server]))
    return 0


def wait_event(stream: int, event: int, *flags: int) -> int | None:
    """A stream waiting on an event of a capture joins it (or merges the event's dependencies); a
    capturing stream waiting on another event gets an event wait node. 0, or None: nothing captured."""
    server = rt.stream(stream)
    rt.event(event)
    with _lock:
        cap = CAPTURES.get(server)
        marked = EVENTS.get(event)
        if marked is not None:
            ecap, deps = marked
            if cap is None:
                if server == 0:
                    ecap.invalidated = True
                    raise CudaRuntimeError(ERR_IMPLICIT,
                                           "the legacy stream cannot join a capture")
                CAPTURES[server] = ecap
                ecap.tails[server] = list(deps)
                _join(ecap, stream, server)
                return 0
            if cap is not ecap:
                cap.invalidated = ecap.invalidated = True
                raise CudaRuntimeError(ERR_MERGE, "the wait would merge two captures")
            tails = cap.tails[server]
            cap.tails[server] = tails + [d for d in deps if all(d is not t for t in tails)]
            return 0
    if cap is None:
        return None
    add(stream, graphs.EVENT_WAIT, (event,))
    return 0


def update_dependencies(stream: int, nodes: list[Node], flags: int) -> None:
    """cudaStreamUpdateCaptureDependencies."""
    if flags not in (ADD_DEPENDENCIES, SET_DEPENDENCIES):
        raise CudaRuntimeError(ERR_INVALID_VALUE, f"flags {flags}")
    server = rt.stream(stream)
    with _lock:
        cap = CAPTURES.get(server)
        if cap is None:
            raise CudaRuntimeError(ERR_ILLEGAL_STATE, "the stream is not capturing")
        if any(n not in cap.graph for n in nodes):
            raise CudaRuntimeError(ERR_INVALID_VALUE, "a node is not one of the capture's graph")
        base = [] if flags == SET_DEPENDENCIES else cap.tails[server]
        cap.tails[server] = base + [n for n in nodes if all(n is not t for t in base)]


def check_event(event: int) -> None:
    """Synchronising on an event last recorded in a capture is cudaErrorCapturedEvent."""
    if EVENTS and event in EVENTS:
        raise CudaRuntimeError(ERR_CAPTURED_EVENT, "the event was last recorded in a capturing stream")


def check_sync(stream: int) -> None:
    """Synchronising with a capturing stream: cudaErrorStreamCaptureUnsupported, the capture is
    invalidated. The legacy stream synchronises with every blocking stream: an unsafe call."""
    if not CAPTURES:
        return
    cap = of(stream)
    if cap is not None:
        cap.invalidated = True
        raise CudaRuntimeError(ERR_UNSUPPORTED, "a capturing stream cannot be synchronised or queried")
    if rt.stream(stream) == 0:
        check_unsafe()


def check_unsafe(*args: int) -> None:
    """A potentially unsafe call (its arguments do not matter) from the calling thread, under its
    capture mode."""
    if not CAPTURES:
        return
    mode = _thread.mode
    if mode == RELAXED:
        return
    me = threading.get_ident()
    with _lock:
        hit = {id(c): c for c in CAPTURES.values()
               if (c.thread == me and c.mode != RELAXED) or (mode == GLOBAL and c.thread != me and c.mode == GLOBAL)}
        if not hit:
            return
        for c in hit.values():
            c.invalidated = True
    raise CudaRuntimeError(ERR_UNSUPPORTED, "a synchronising or allocating call while a stream captures "
                           "(see cudaThreadExchangeStreamCaptureMode)")


_HOOKS: list[tuple[Face, str, Callable[..., int], Callable[..., int]]] = []   # face, name, entry, hooked


def hook(face: Face, name: str, capture: Callable[..., int | None]) -> None:
    """Put ``capture`` in front of ``face``'s implementation of ``name`` while any stream captures
    (the entries are swapped at the first capture and back after the last, so other calls pay
    nothing): it gets the same arguments and returns the code when it handled the call, None to
    let the implementation run. In front of an unguarded implementation (a query answering codes
    of its own) it may only raise."""
    original = face.lookup(name)
    if original is None:
        raise RuntimeError(f"{name} has no implementation to capture in front of")
    inner: Any = getattr(original, "__wrapped__", None)
    if inner is None:
        def check(*args: int) -> int:
            capture(*args)
            return 0
        check.__name__ = getattr(original, "__name__", name)
        checked = face.guard(check)

        def hooked(*args: int) -> int:
            code = checked(*args)
            return code if code else original(*args)
        _HOOKS.append((face, name, original, hooked))
        return

    def guarded(*args: int) -> int:
        code = capture(*args)
        return inner(*args) if code is None else code
    guarded.__name__ = guarded.__qualname__ = inner.__name__
    entry = face.guard(guarded)        # (its __wrapped__ is ``guarded``: callers of it capture too)
    _HOOKS.append((face, name, original, entry))


def _arm() -> None:
    """The first capture began: the hooks go in front (the caller holds ``_lock``)."""
    for face, name, _, hooked in _HOOKS:
        face.register(name, hooked, replace=True)


def _disarm() -> None:
    """No capture is left: the implementations take the calls again (the caller holds ``_lock``)."""
    for face, name, original, hooked in _HOOKS:
        if face.lookup(name) is hooked:
            face.register(name, original, replace=True)
