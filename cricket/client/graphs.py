"""CUDA graphs in the client: graphs and their nodes, executable graphs, and their launch.

A graph lives in the client until it is instantiated. Instantiation sorts its nodes so that every
node follows the nodes it depends on (child graphs are inlined in place), freezes their parameters,
and sends the device nodes (kernels, device-to-device copies, memsets, event records and waits) to
the server once as one executable graph (CR_GRAPH_CREATE). A launch is then one batched call
(CR_GRAPH_LAUNCH_ASYNC) naming that graph and the stream; the server replays the nodes on the
stream. Nodes that touch host memory or run host code (host functions, copies to or from host
memory) run in the client between ranges of the device nodes, in the same order.

Both API faces (``graphs_runtime``, ``graphs_driver``) use what is here; stream capture
(``capture``) builds the same graphs. Errors are raised as :class:`CudaRuntimeError` with codes
that CUDA's runtime and driver APIs share (cudaErrorInvalidValue is CUDA_ERROR_INVALID_VALUE, ...).
"""
from __future__ import annotations

import itertools
import logging
import os
import threading
from dataclasses import dataclass, field, replace
from typing import Any

from cricket.client import hostmem
from cricket.client.errors import ERR_INVALID_VALUE, CudaRuntimeError
from cricket.client.runtime import RUNTIME as rt
from cricket.cudafacts.cudart_errors import CODES

log = logging.getLogger(__name__)

# cudaGraphNodeType, the same numbers as CUgraphNodeType
KERNEL, MEMCPY, MEMSET, HOST, CHILD, EMPTY, EVENT_WAIT, EVENT_RECORD = range(8)
# cudaMemcpyKind
H2H, H2D, D2H, D2D = 0, 1, 2, 3
# cudaGraphExecUpdateResult
UPDATE_SUCCESS, UPDATE_TOPOLOGY_CHANGED, UPDATE_NODE_TYPE_CHANGED = 0, 2, 3
ERR_UPDATE_FAILURE = CODES["cudaErrorGraphExecUpdateFailure"]
MAX_NODES = 16384                     # CRICKET_MAX_GRAPH_NODES: device nodes of one executable graph

_handles = itertools.count(0x6700000)
_lock = threading.Lock()


def _new_handle() -> int:
    with _lock:
        return next(_handles) << 4


@dataclass(eq=False)                 # nodes and graphs are equal only to themselves
class Node:
    """One node. ``params`` by type: KERNEL (``kernel_params``),
    MEMCPY (dst, src, count, kind), MEMSET (dst, value, element size, width, height, pitch), HOST
    (fn, user data, stream callback: bool), CHILD (graph), EVENT_RECORD / EVENT_WAIT (event)."""
    kind: int
    params: tuple
    deps: list["Node"]
    handle: int = field(default_factory=_new_handle)


@dataclass(eq=False)
class Graph:
    nodes: list[Node] = field(default_factory=list)
    handle: int = field(default_factory=_new_handle)

    def __contains__(self, node: Node) -> bool:
        return NODES.get(node.handle, (None, None))[1] is self or any(n is node for n in self.nodes)

    def add(self, kind: int, params: tuple, deps: list[Node], register: bool = True) -> Node:
        for d in deps:
            if d not in self:
                raise CudaRuntimeError(ERR_INVALID_VALUE, "a dependency is not a node of this graph")
        if len(set(map(id, deps))) != len(deps):
            raise CudaRuntimeError(ERR_INVALID_VALUE, "a dependency is named twice")
        node = Node(kind, params, list(deps))
        self.nodes.append(node)
        if register:
            NODES[node.handle] = (node, self)
        return node

    def clone(self, register: bool = True) -> tuple["Graph", dict[int, Node]]:
        """A copy whose nodes have new handles; maps each original node's handle to its copy.
        ``register``: the application gets its handle (a child graph's copy and an executable
        graph's are the graph's own)."""
        copy = Graph()
        mapping: dict[int, Node] = {}
        for n in self.nodes:
            params = (n.params[0].clone(False)[0],) if n.kind == CHILD else n.params
            c = mapping[n.handle] = Node(n.kind, params, [])
            copy.nodes.append(c)
            if register:
                NODES[c.handle] = (c, copy)
        for n in self.nodes:            # an edge may lead to a node made earlier (cudaGraphAddDependencies)
            mapping[n.handle].deps = [mapping[d.handle] for d in n.deps]
        if register:
            GRAPHS[copy.handle] = copy
        return copy, mapping

    def sorted(self) -> list[Node]:
        """The nodes in an order where each follows its dependencies (Kahn, stable)."""
        waiting = {id(n): len(n.deps) for n in self.nodes}
        users: dict[int, list[Node]] = {id(n): [] for n in self.nodes}
        for n in self.nodes:
            for d in n.deps:
                users[id(d)].append(n)
        ready = [n for n in self.nodes if not n.deps]
        order: list[Node] = []
        while ready:
            n = ready.pop(0)
            order.append(n)
            for u in users[id(n)]:
                waiting[id(u)] -= 1
                if not waiting[id(u)]:
                    ready.append(u)
        if len(order) != len(self.nodes):
            raise CudaRuntimeError(ERR_INVALID_VALUE, "the graph has a cycle")
        return order

    def flat(self) -> list[Node]:
        """The sorted nodes with child graphs inlined."""
        out: list[Node] = []
        for n in self.sorted():
            out.extend(n.params[0].flat() if n.kind == CHILD else [n])
        return out

    def shape(self) -> list[tuple]:
        """What an exec update must find unchanged: each node's type and dependencies, in order."""
        index = {id(n): i for i, n in enumerate(self.nodes)}
        return [(n.kind, tuple(sorted(index[id(d)] for d in n.deps)),
                 tuple(n.params[0].shape()) if n.kind == CHILD else ()) for n in self.nodes]


GRAPHS: dict[int, Graph] = {}
NODES: dict[int, tuple[Node, Graph]] = {}
EXECS: dict[int, "ExecGraph"] = {}


def graph(handle: int) -> Graph:
    g = GRAPHS.get(handle)
    if g is None:
        raise CudaRuntimeError(ERR_INVALID_VALUE, f"graph {handle:#x} does not exist")
    return g


def node(handle: int) -> Node:
    entry = NODES.get(handle)
    if entry is None:
        raise CudaRuntimeError(ERR_INVALID_VALUE, f"graph node {handle:#x} does not exist")
    return entry[0]


def nodes_at(address: int, count: int) -> list[Node]:
    """The nodes of a C array of ``count`` node handles."""
    if count and not address:
        raise CudaRuntimeError(ERR_INVALID_VALUE, f"{count} dependencies named by a NULL array")
    return [node(hostmem.load_u64(address + 8 * i)) for i in range(count)]


def create_graph() -> Graph:
    g = Graph()
    GRAPHS[g.handle] = g
    return g


def destroy_graph(handle: int) -> None:
    g = GRAPHS.pop(handle, None)
    if g is None:
        raise CudaRuntimeError(ERR_INVALID_VALUE, f"graph {handle:#x} does not exist")
    for n in g.nodes:
        NODES.pop(n.handle, None)


def destroy_node(handle: int) -> None:
    n = node(handle)
    g = NODES.pop(handle)[1]
    g.nodes.remove(n)
    for other in g.nodes:
        if n in other.deps:
            other.deps.remove(n)


def kernel_params(function: int, grid: tuple, block: tuple, shared: int, params: bytes, kernel: int,
                  layout: tuple) -> tuple:
    """A kernel node's parameters: the server's function, the configuration, the packed arguments,
    the kernel as the application named it and its argument layout ((offset, size), ...)."""
    if 0 in grid or 0 in block:
        raise CudaRuntimeError(CODES["cudaErrorInvalidConfiguration"],
                               f"graph kernel node: grid {grid}, block {block}")
    return (function, tuple(grid), tuple(block), shared, bytes(params), kernel, tuple(layout))


# ------------------------------------------------------------------ executable graphs

@dataclass
class ExecGraph:
    """An instantiated graph: its nodes' parameters frozen, its device nodes on the server."""
    source: Graph                    # a clone of the graph it was made from, as it was then
    order: list[Node]                # source.flat(): what runs, in this order
    origin: dict[int, int]           # handle of a node of the instantiated graph -> index in order
    server: int = 0                  # the server's executable graph; 0: to be (re)created
    steps: list[tuple] = field(default_factory=list)
    kernels: int = 0
    handle: int = field(default_factory=_new_handle)


def instantiate(g: Graph) -> ExecGraph:
    source, mapping = g.clone(register=False)
    order = source.flat()
    position = {id(n): i for i, n in enumerate(order)}
    origin = {h: position[id(c)] for h, c in mapping.items() if id(c) in position}
    ex = ExecGraph(source, order, origin)
    _plan(ex)
    EXECS[ex.handle] = ex
    return ex


def _plan(ex: ExecGraph) -> None:
    """Split the order into ranges of device nodes (one server call each) and client steps."""
    steps: list[tuple] = []
    device = 0
    kernels = 0
    for n in ex.order:
        kind = n.kind
        if kind == KERNEL:
            kernels += 1
        if kind == MEMCPY and n.params[3] != D2D or kind == HOST:
            steps.append(("client", n))
        elif kind == EMPTY:
            continue
        else:
            count = len(_rows(n)) if kind == MEMSET else 1
            if steps and steps[-1][0] == "server":
                steps[-1] = ("server", steps[-1][1], steps[-1][2] + count)
            else:
                steps.append(("server", device, count))
            device += count
    if device > MAX_NODES:
        raise CudaRuntimeError(CODES["cudaErrorNotSupported"],
                               f"{device} device nodes; cricket runs at most {MAX_NODES} in one graph")
    ex.steps = steps
    ex.kernels = kernels


def _rows(n: Node) -> list[tuple[int, int]]:
    dst, _, size, width, height, pitch = n.params
    if height <= 1 or pitch == width * size:
        return [(dst, width * height)]
    return [(dst + r * pitch, width) for r in range(height)]


def _wire_nodes(ex: ExecGraph) -> list:
    from cricket.protocol import gen as P
    out = []
    for n in ex.order:
        kind, p = n.kind, n.params
        if kind == KERNEL:
            out.append(P.cr_graph_node(kind=0, kernel=P.cr_launch_args(
                function=p[0], grid=P.cr_dim3(x=p[1][0], y=p[1][1], z=p[1][2]),
                block=P.cr_dim3(x=p[2][0], y=p[2][1], z=p[2][2]), shared_mem=p[3], stream=0, params=p[4])))
        elif kind == MEMCPY and p[3] == D2D:
            out.append(P.cr_graph_node(kind=1, copy=P.cr_dtod_args(dst=p[0], src=p[1], size=p[2], stream=0)))
        elif kind == MEMSET:
            mask = (1 << (8 * p[2])) - 1
            out.extend(P.cr_graph_node(kind=2, memset=P.cr_memset_args(dst=dst, value=p[1] & mask, element_size=p[2],
                                                                       count=count, stream=0))
                       for dst, count in _rows(n))
        elif kind == EVENT_RECORD:
            out.append(P.cr_graph_node(kind=3, event_record=rt.event(p[0])))
        elif kind == EVENT_WAIT:
            out.append(P.cr_graph_node(kind=4, event_wait=rt.event(p[0])))
    return out


def _server_graph(ex: ExecGraph) -> int:
    if not ex.server:
        conn = rt.conn
        ex.server = conn._check(conn._stub.CR_GRAPH_CREATE(_graph_args(_wire_nodes(ex))), "cuGraphInstantiate").handle
    return ex.server


def _graph_args(nodes: list) -> Any:
    from cricket.protocol import gen as P
    return P.cr_graph_args(nodes=nodes)


def _drop_server_graph(ex: ExecGraph) -> None:
    if ex.server and rt._conn is not None:
        conn = rt.conn
        conn._check(conn._stub.CR_GRAPH_DESTROY(ex.server), "cuGraphExecDestroy")
    ex.server = 0


def exec_graph(handle: int) -> ExecGraph:
    ex = EXECS.get(handle)
    if ex is None:
        raise CudaRuntimeError(ERR_INVALID_VALUE, f"executable graph {handle:#x} does not exist")
    return ex


def destroy_exec(handle: int) -> None:
    ex = exec_graph(handle)
    del EXECS[handle]
    _drop_server_graph(ex)


def upload(ex: ExecGraph) -> None:
    """cudaGraphUpload: create the server's executable graph now rather than at the first launch."""
    if any(s[0] == "server" for s in ex.steps):
        _server_graph(ex)


def launch(ex: ExecGraph, stream: int) -> None:
    """Run the executable graph on application stream ``stream``: each range of device nodes is one
    batched call; host steps run here, in order, after the stream's earlier work."""
    from cricket.client import host_callbacks
    from cricket.protocol import gen as P
    server_stream = rt.stream(stream)
    upload(ex)
    server = ex.server
    batched = rt.conn._stub.CR_GRAPH_LAUNCH_ASYNC_batched
    if rt.mapped_memory.ranges:              # the host's writes to mapped memory go first
        rt.mapped_memory.before_launch(server_stream)
    for step in ex.steps:
        if step[0] == "server":
            batched(P.cr_graph_launch_args(graph=server, stream=server_stream, first=step[1], count=step[2]))
            continue
        n = step[1]
        if n.kind == HOST:
            host_callbacks.run_in_order(stream, n.params[0], n.params[1])
            continue
        dst, src, count, kind = n.params
        if kind == H2D:
            rt.htod(dst, src, count, server_stream, False)
        elif kind == D2H:
            rt.defer_dtoh(rt.dtoh_start(dst, src, count, server_stream), dst, count)
        else:                                # host to host, in stream order
            rt.synchronize_stream(stream)
            hostmem.write(dst, hostmem.view(src, count))
    rt.stats.launches += ex.kernels


def update(ex: ExecGraph, g: Graph) -> tuple[int, int]:
    """cudaGraphExecUpdate: (cudaGraphExecUpdateResult, the handle of the node that failed)."""
    old, new = ex.source.nodes, g.nodes
    if len(old) != len(new):
        return UPDATE_TOPOLOGY_CHANGED, 0
    for a, b, sa, sb in zip(old, new, ex.source.shape(), g.shape()):
        if a.kind != b.kind:
            return UPDATE_NODE_TYPE_CHANGED, b.handle
        if sa != sb:
            return UPDATE_TOPOLOGY_CHANGED, b.handle
    fresh = instantiate(g)
    del EXECS[fresh.handle]
    _drop_server_graph(ex)
    # the same shape: the nodes of both graphs name the same positions
    ex.source, ex.order, ex.steps, ex.kernels = fresh.source, fresh.order, fresh.steps, fresh.kernels
    ex.origin.update(fresh.origin)
    return UPDATE_SUCCESS, 0


def set_exec_node_params(ex: ExecGraph, node_handle: int, kind: int, params: tuple) -> None:
    """Change one node of an executable graph (cudaGraphExec*NodeSetParams); its type stays."""
    index = ex.origin.get(node_handle)
    if index is None:
        raise CudaRuntimeError(ERR_INVALID_VALUE, "the node is not one of the executable graph's")
    n = ex.order[index]
    if n.kind != kind:
        raise CudaRuntimeError(ERR_INVALID_VALUE, "the node's type differs")
    if kind == KERNEL and params[0] != n.params[0]:
        # another function in the same node: allowed by CUDA 12 when the context is the same
        log.debug("exec kernel node %#x: function %#x -> %#x", node_handle, n.params[0], params[0])
    ex.order[index] = replace(n, params=params)
    _plan(ex)
    _drop_server_graph(ex)                   # recreated at the next launch


def _forget_server_graphs() -> None:
    """In a forked child (a session of its own): each executable graph is created again on the
    server at its first launch."""
    for ex in EXECS.values():
        ex.server = 0


os.register_at_fork(after_in_child=_forget_server_graphs)

