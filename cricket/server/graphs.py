"""Executable CUDA graphs, kept per session: the device nodes of an instantiated graph, replayed on
the stream of each launch.

The client sorts a graph's nodes so that every node comes after the nodes it depends on and sends
the device nodes once (CR_GRAPH_CREATE); a launch (CR_GRAPH_LAUNCH*) names the graph, the stream
and a range of the list, and the session's worker runs that range in order through the same
service calls single operations take, so every address, handle and size is checked as it is for
them. Memory freed while a graph still uses it is the program's bug, as in CUDA: the replay fails
with the copy's or launch's own error, kept for the next synchronising call.
"""
from __future__ import annotations

import functools
import logging
import threading
import weakref
from dataclasses import dataclass
from typing import Any

from ..backends.base import BackendError
from .. import _env
from ..cudafacts import curesult
from . import ledger
from .session import Session, new_handle

log = logging.getLogger(__name__)

KERNEL, COPY, MEMSET, EVENT_RECORD, EVENT_WAIT = range(5)
MAX_GRAPHS = 4096                    # executable graphs one session may hold
MAX_SESSION_NODES = 1 << 18          # their nodes, all together
MAX_SESSION_BYTES = 64 << 20         # the kernel parameter bytes they hold
MAX_SERVER_NODES = 1 << 21           # the same bounds for all sessions together (fewer nodes: CRICKET_GRAPH_NODES_TOTAL)
MAX_SERVER_BYTES = 1 << 30


@dataclass
class ExecGraph:
    nodes: list[tuple]               # (kind, *arguments of the service call after the session)
    param_bytes: int


@dataclass
class _Held:
    """What one session's executable graphs hold."""
    nodes: int = 0
    param_bytes: int = 0


class _SessionGraphs:
    def __init__(self) -> None:
        self.graphs: dict[int, ExecGraph] = {}
        self.held = _Held()


_tables: "weakref.WeakKeyDictionary[Session, _SessionGraphs]" = weakref.WeakKeyDictionary()
_server_lock = threading.Lock()     # the sessions' counts (the server's are in ledger.SERVER)


def _release(held: _Held, nodes: int, param_bytes: int) -> None:
    with _server_lock:
        held.nodes -= nodes
        held.param_bytes -= param_bytes
        ledger.SERVER.give(ledger.GRAPH_NODES, nodes)
        ledger.SERVER.give(ledger.GRAPH_BYTES, param_bytes)


def _too_many(whose: str, nodes: int, param_bytes: int, more_nodes: int, more_bytes: int,
              bound_nodes: int, bound_bytes: int) -> BackendError:
    return BackendError(curesult.OUT_OF_MEMORY,
                        f"{whose} executable graphs would hold {nodes + more_nodes} nodes and "
                        f"{param_bytes + more_bytes} parameter bytes, more than {bound_nodes} "
                        f"and {bound_bytes}")


def _graphs(session: Session) -> _SessionGraphs:
    table = _tables.get(session)
    if table is None:
        table = _tables[session] = _SessionGraphs()
        held = table.held      # what the session still holds goes back when it closes (or is gone)
        weakref.finalize(session, lambda: _release(held, held.nodes, held.param_bytes))
        session.on_free.append(functools.partial(_drop, weakref.ref(session)))
    return table


def _drop(session_ref: "weakref.ref[Session]") -> None:
    """A session's graphs at its close or reset: gone, and what they held given back."""
    session = session_ref()
    table = _tables.pop(session, None) if session is not None else None
    if table is not None:
        _release(table.held, table.held.nodes, table.held.param_bytes)


def _invalid(message: str) -> BackendError:
    return BackendError(curesult.INVALID_VALUE, message)


def _node(session: Session, node: Any) -> tuple:
    """One wire node as a replay step, checked as far as it can be before a launch."""
    kind = node.kind
    if kind == KERNEL:
        a = node.kernel
        record = session.functions.get(a.function)
        grid, block = (a.grid.x, a.grid.y, a.grid.z), (a.block.x, a.block.y, a.block.z)
        if record.info.param_size and len(a.params) != record.info.param_size:
            raise _invalid(f"graph kernel node {record.name}: {len(a.params)} parameter bytes, "
                           f"the kernel takes {record.info.param_size}")
        if 0 in grid or 0 in block:
            raise _invalid(f"graph kernel node {record.name}: empty grid {grid} or block {block}")
        return (KERNEL, a.function, grid, block, a.shared_mem, bytes(a.params))
    if kind == COPY:
        return (COPY, node.copy.dst, node.copy.src, node.copy.size)
    if kind == MEMSET:
        m = node.memset
        if m.element_size not in (1, 2, 4):
            raise _invalid(f"graph memset node: element size {m.element_size}; use 1, 2 or 4")
        return (MEMSET, m.dst, m.value, m.element_size, m.count)
    if kind in (EVENT_RECORD, EVENT_WAIT):
        event = node.event_record if kind == EVENT_RECORD else node.event_wait
        session.events.get(event)
        return (kind, event)
    raise _invalid(f"graph node kind {kind} does not exist")


def graph_create(session: Session, service: Any, nodes: list) -> int:
    """Check and keep the device nodes of an executable graph; its handle."""
    service._ready(session)
    table = _graphs(session)
    if len(table.graphs) >= MAX_GRAPHS:
        raise BackendError(curesult.OUT_OF_MEMORY, f"a session holds at most {MAX_GRAPHS} executable graphs; "
                           "destroy those no longer launched")
    steps = [_node(session, n) for n in nodes]
    size = sum(len(s[5]) for s in steps if s[0] == KERNEL)
    held = table.held
    with _server_lock:
        if held.nodes + len(steps) > MAX_SESSION_NODES or held.param_bytes + size > MAX_SESSION_BYTES:
            raise _too_many("the session's", held.nodes, held.param_bytes, len(steps), size,
                            MAX_SESSION_NODES, MAX_SESSION_BYTES)
        server = ledger.SERVER
        most_nodes = _env.count("CRICKET_GRAPH_NODES_TOTAL", MAX_SERVER_NODES, MAX_SERVER_NODES)
        if server.take(((ledger.GRAPH_NODES, len(steps), most_nodes),
                        (ledger.GRAPH_BYTES, size, MAX_SERVER_BYTES))) is not None:
            raise _too_many("the server's", server.value(ledger.GRAPH_NODES), server.value(ledger.GRAPH_BYTES),
                            len(steps), size, most_nodes, MAX_SERVER_BYTES)
        held.nodes += len(steps)
        held.param_bytes += size
    handle = new_handle()
    table.graphs[handle] = ExecGraph(steps, size)
    return handle


def graph_destroy(session: Session, service: Any, handle: int) -> None:
    service._ready(session)
    table = _graphs(session)
    graph = table.graphs.pop(handle, None)
    if graph is None:
        raise BackendError(curesult.INVALID_HANDLE, f"graph handle {handle} is not one of this session's")
    _release(table.held, len(graph.nodes), graph.param_bytes)


def graph_launch(session: Session, service: Any, handle: int, stream: int, first: int, count: int) -> None:
    """Run nodes ``first`` to ``first + count`` of the graph in order on ``stream``."""
    service._ready(session)
    graph = _graphs(session).graphs.get(handle)
    if graph is None:
        raise BackendError(curesult.INVALID_HANDLE, f"graph handle {handle} is not one of this session's")
    if first + count > len(graph.nodes):
        raise _invalid(f"nodes {first}..{first + count} of a graph of {len(graph.nodes)}")
    session.stream(stream)                       # an unknown stream fails before any node runs
    for step in graph.nodes[first:first + count]:
        kind = step[0]
        if kind == KERNEL:
            service.launch(session, step[1], step[2], step[3], step[4], stream, step[5])
        elif kind == COPY:
            service.memcpy_dtod(session, step[1], step[2], step[3], stream)
        elif kind == MEMSET:
            service.memset(session, step[1], step[2], step[3], step[4], stream)
        elif kind == EVENT_RECORD:
            service.event_record(session, step[1], stream)
        else:
            service.stream_wait_event(session, stream, step[1])
