"""The graph, stream-capture and host-function entries both API faces share: their C shims
(``cext/preload/graphs.c``, ``capture.c``; ``cext/driver/graphs.c``) pass the same words for them, and
the codes they return mean the same in both APIs (cudaErrorStreamCaptureUnsupported is
CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, ...). The kernel-node entries, whose kernels each face names
its own way, and capture in front of each face's work are in ``graphs_runtime`` and ``graphs_driver``.
"""
from __future__ import annotations

import ctypes
import logging
import threading

from cricket.client import capture, graphs, hostmem, host_callbacks
from cricket.client.driver_face import DRIVER_API
from cricket.client.errors import ERR_INVALID_VALUE, ERR_NOT_SUPPORTED, CudaRuntimeError
from cricket.client.faces import implements
from cricket.client.runtime import RUNTIME as rt
from cricket.client.runtime_face import RUNTIME_API

log = logging.getLogger(__name__)

SUCCESS = 0
INSTANTIATE_DEVICE_LAUNCH = 4          # cudaGraphInstantiateFlagDeviceLaunch (CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH)


def required(ptr: int) -> int:
    """An output pointer, checked."""
    if not ptr:
        raise CudaRuntimeError(ERR_INVALID_VALUE, "an output pointer is NULL")
    return ptr


def add_node(pnode: int, graph: int, deps: int, count: int, kind: int, params: tuple) -> int:
    """Add a node of ``kind`` after the ``count`` nodes at ``deps``; its handle goes to ``pnode``."""
    required(pnode)
    g = graphs.graph(graph)
    n = g.add(kind, params, graphs.nodes_at(deps, count))
    hostmem.store_u64(pnode, n.handle)
    return SUCCESS


def set_kernel_node(node: int, params: tuple) -> int:
    n = graphs.node(node)
    if n.kind != graphs.KERNEL:
        return ERR_INVALID_VALUE
    n.params = params
    return SUCCESS


# ------------------------------------------------------------------ capture

@implements(RUNTIME_API, "cudaStreamBeginCapture")
@implements(DRIVER_API, "cuStreamBeginCapture")
def stream_begin_capture(stream: int, mode: int) -> int:
    capture.begin(stream, mode)
    return SUCCESS


@implements(RUNTIME_API, "cudaStreamEndCapture")
@implements(DRIVER_API, "cuStreamEndCapture")
def stream_end_capture(stream: int, pgraph: int) -> int:
    required(pgraph)
    try:
        g = capture.end(stream)
    except CudaRuntimeError:
        hostmem.store_u64(pgraph, 0)
        raise
    hostmem.store_u64(pgraph, g.handle)
    return SUCCESS


@implements(RUNTIME_API, "cudaStreamIsCapturing")
@implements(DRIVER_API, "cuStreamIsCapturing")
def stream_is_capturing(stream: int, pstatus: int) -> int:
    required(pstatus)
    rt.stream(stream)                       # an unknown stream is an error
    hostmem.store_i32(pstatus, capture.status(stream)[0])
    return SUCCESS


class _CaptureDeps(threading.local):
    """The array cudaStreamGetCaptureInfo hands out: valid until the thread's next call."""
    array = None


_capture_deps = _CaptureDeps()


@implements(RUNTIME_API, "cudaStreamGetCaptureInfo")
@implements(DRIVER_API, "cuStreamGetCaptureInfo")
def stream_get_capture_info(stream: int, pstatus: int, pid: int, pgraph: int, pdeps: int, pcount: int) -> int:
    required(pstatus)
    state, cap = capture.status(stream)
    hostmem.store_i32(pstatus, state)
    if cap is None:
        return SUCCESS
    tails = cap.tails[rt.stream(stream)]
    if pid:
        hostmem.store_u64(pid, cap.id)
    if pgraph:
        hostmem.store_u64(pgraph, cap.graph.handle)
    if pdeps:
        array = (ctypes.c_uint64 * max(1, len(tails)))(*[n.handle for n in tails])
        _capture_deps.array = array
        hostmem.store_u64(pdeps, ctypes.addressof(array) if tails else 0)
    if pcount:
        hostmem.store_u64(pcount, len(tails))
    return SUCCESS


@implements(RUNTIME_API, "cudaStreamUpdateCaptureDependencies")
@implements(DRIVER_API, "cuStreamUpdateCaptureDependencies")
def stream_update_capture_dependencies(stream: int, deps: int, edge_data: int, count: int, flags: int) -> int:
    if edge_data:
        return ERR_NOT_SUPPORTED
    capture.update_dependencies(stream, graphs.nodes_at(deps, count), flags)
    return SUCCESS


@implements(RUNTIME_API, "cudaThreadExchangeStreamCaptureMode")
@implements(DRIVER_API, "cuThreadExchangeStreamCaptureMode")
def thread_exchange_stream_capture_mode(pmode: int) -> int:
    required(pmode)
    hostmem.store_i32(pmode, capture.exchange_mode(ctypes.c_int32.from_address(pmode).value))
    return SUCCESS


# ------------------------------------------------------------------ graphs

@implements(RUNTIME_API, "cudaGraphCreate")
@implements(DRIVER_API, "cuGraphCreate")
def graph_create(pgraph: int, flags: int) -> int:
    required(pgraph)
    if flags:
        return ERR_INVALID_VALUE
    hostmem.store_u64(pgraph, graphs.create_graph().handle)
    return SUCCESS


@implements(RUNTIME_API, "cudaGraphDestroy")
@implements(DRIVER_API, "cuGraphDestroy")
def graph_destroy(graph: int) -> int:
    graphs.destroy_graph(graph)
    return SUCCESS


@implements(RUNTIME_API, "cudaGraphClone")
@implements(DRIVER_API, "cuGraphClone")
def graph_clone(pclone: int, graph: int) -> int:
    required(pclone)
    hostmem.store_u64(pclone, graphs.graph(graph).clone()[0].handle)
    return SUCCESS


def _store_nodes(nodes: list, out: int, pcount: int) -> None:
    required(pcount)
    if out:
        for i, n in enumerate(nodes[:hostmem.load_u64(pcount)]):
            hostmem.store_u64(out + 8 * i, n.handle)
    hostmem.store_u64(pcount, len(nodes))


@implements(RUNTIME_API, "cudaGraphGetNodes")
@implements(DRIVER_API, "cuGraphGetNodes")
def graph_get_nodes(graph: int, out: int, pcount: int) -> int:
    _store_nodes(graphs.graph(graph).nodes, out, pcount)
    return SUCCESS


@implements(RUNTIME_API, "cudaGraphGetRootNodes")
@implements(DRIVER_API, "cuGraphGetRootNodes")
def graph_get_root_nodes(graph: int, out: int, pcount: int) -> int:
    _store_nodes([n for n in graphs.graph(graph).nodes if not n.deps], out, pcount)
    return SUCCESS


@implements(RUNTIME_API, "cudaGraphNodeGetType")
@implements(DRIVER_API, "cuGraphNodeGetType")
def graph_node_get_type(node: int, ptype: int) -> int:
    required(ptype)
    hostmem.store_i32(ptype, graphs.node(node).kind)
    return SUCCESS


@implements(RUNTIME_API, "cudaGraphNodeGetDependencies")
@implements(DRIVER_API, "cuGraphNodeGetDependencies")
def graph_node_get_dependencies(node: int, out: int, edge_data: int, pcount: int) -> int:
    _store_nodes(graphs.node(node).deps, out, pcount)
    return SUCCESS


@implements(RUNTIME_API, "cudaGraphDestroyNode")
@implements(DRIVER_API, "cuGraphDestroyNode")
def graph_destroy_node(node: int) -> int:
    graphs.destroy_node(node)
    return SUCCESS


@implements(RUNTIME_API, "cudaGraphAddDependencies")
@implements(DRIVER_API, "cuGraphAddDependencies")
def graph_add_dependencies(graph: int, from_: int, to: int, edge_data: int, count: int) -> int:
    if edge_data:
        return ERR_NOT_SUPPORTED
    g = graphs.graph(graph)
    for a, b in zip(graphs.nodes_at(from_, count), graphs.nodes_at(to, count)):
        if a not in g or b not in g or any(a is d for d in b.deps):
            return ERR_INVALID_VALUE
        b.deps.append(a)
    return SUCCESS


@implements(RUNTIME_API, "cudaGraphKernelNodeGetParams")
@implements(DRIVER_API, "cuGraphKernelNodeGetParams")
def graph_kernel_node_get_params(node: int, out: int) -> int:
    required(out)
    n = graphs.node(node)
    if n.kind != graphs.KERNEL:
        return ERR_INVALID_VALUE
    _, grid, block, shared, params, func, layout = n.params
    buffer = ctypes.create_string_buffer(params, max(1, len(params)))
    pointers = (ctypes.c_void_p * max(1, len(layout)))(*[ctypes.addressof(buffer) + offset for offset, _ in layout])
    n.kept = (buffer, pointers)             # the struct points here until the node changes
    hostmem.store_u64(out, func)
    for i, v in enumerate((*grid, *block, shared)):
        hostmem.store_u32(out + 8 + 4 * i, v)
    hostmem.store_u64(out + 40, ctypes.addressof(pointers))
    hostmem.store_u64(out + 48, 0)
    return SUCCESS


@implements(RUNTIME_API, "cudaGraphAddMemcpyNode1D")
@implements(DRIVER_API, "cuGraphAddMemcpyNode")
def graph_add_memcpy_node_1d(pnode: int, graph: int, deps: int, count: int, dst: int, src: int, size: int,
                             kind: int) -> int:
    return add_node(pnode, graph, deps, count, graphs.MEMCPY, (dst, src, size, rt.kind_of(dst, src, kind)))


@implements(RUNTIME_API, "cudaGraphAddMemsetNode")
@implements(DRIVER_API, "cuGraphAddMemsetNode")
def graph_add_memset_node(pnode: int, graph: int, deps: int, count: int, dst: int, value: int, element_size: int,
                          width: int, height: int, pitch: int) -> int:
    if element_size not in (1, 2, 4) or not width or not height or (height > 1 and pitch < width * element_size):
        return ERR_INVALID_VALUE
    return add_node(pnode, graph, deps, count, graphs.MEMSET, (dst, value, element_size, width, height, pitch))


@implements(RUNTIME_API, "cudaGraphAddHostNode")
@implements(DRIVER_API, "cuGraphAddHostNode")
def graph_add_host_node(pnode: int, graph: int, deps: int, count: int, fn: int, data: int) -> int:
    if not fn:
        return ERR_INVALID_VALUE
    return add_node(pnode, graph, deps, count, graphs.HOST, (fn, data))


@implements(RUNTIME_API, "cudaGraphAddChildGraphNode")
@implements(DRIVER_API, "cuGraphAddChildGraphNode")
def graph_add_child_graph_node(pnode: int, graph: int, deps: int, count: int, child: int) -> int:
    return add_node(pnode, graph, deps, count, graphs.CHILD, (graphs.graph(child).clone(register=False)[0],))


@implements(RUNTIME_API, "cudaGraphAddEmptyNode")
@implements(DRIVER_API, "cuGraphAddEmptyNode")
def graph_add_empty_node(pnode: int, graph: int, deps: int, count: int) -> int:
    return add_node(pnode, graph, deps, count, graphs.EMPTY, ())


@implements(RUNTIME_API, "cudaGraphAddEventRecordNode")
@implements(DRIVER_API, "cuGraphAddEventRecordNode")
def graph_add_event_record_node(pnode: int, graph: int, deps: int, count: int, event: int) -> int:
    rt.event(event)
    return add_node(pnode, graph, deps, count, graphs.EVENT_RECORD, (event,))


@implements(RUNTIME_API, "cudaGraphAddEventWaitNode")
@implements(DRIVER_API, "cuGraphAddEventWaitNode")
def graph_add_event_wait_node(pnode: int, graph: int, deps: int, count: int, event: int) -> int:
    rt.event(event)
    return add_node(pnode, graph, deps, count, graphs.EVENT_WAIT, (event,))


@implements(RUNTIME_API, "cudaGraphInstantiate")
@implements(DRIVER_API, "cuGraphInstantiate")
def graph_instantiate(pexec: int, graph: int, flags: int) -> int:
    """Flags: auto-free on launch, upload and node priorities change nothing here (no memory nodes,
    the upload happens at the first launch, one replay order); a graph launched from the device
    (cudaGraphInstantiateFlagDeviceLaunch) is not supported."""
    required(pexec)
    if flags & INSTANTIATE_DEVICE_LAUNCH:
        return ERR_NOT_SUPPORTED
    hostmem.store_u64(pexec, graphs.instantiate(graphs.graph(graph)).handle)
    return SUCCESS


@implements(RUNTIME_API, "cudaGraphExecDestroy")
@implements(DRIVER_API, "cuGraphExecDestroy")
def graph_exec_destroy(exec_: int) -> int:
    graphs.destroy_exec(exec_)
    return SUCCESS


@implements(RUNTIME_API, "cudaGraphLaunch")
@implements(DRIVER_API, "cuGraphLaunch")
def graph_launch(exec_: int, stream: int) -> int:
    ex = graphs.exec_graph(exec_)
    if capture.of(stream) is None or not capture.add_graph(stream, ex.source):
        graphs.launch(ex, stream)
    return SUCCESS


@implements(RUNTIME_API, "cudaGraphUpload")
@implements(DRIVER_API, "cuGraphUpload")
def graph_upload(exec_: int, stream: int) -> int:
    graphs.upload(graphs.exec_graph(exec_))
    return SUCCESS


@implements(RUNTIME_API, "cudaGraphExecUpdate")
@implements(DRIVER_API, "cuGraphExecUpdate")
def graph_exec_update(exec_: int, graph: int, info: int) -> int:
    result, failed = graphs.update(graphs.exec_graph(exec_), graphs.graph(graph))
    if info:
        hostmem.store_i32(info, result)
        hostmem.store_u64(info + 8, failed)
        hostmem.store_u64(info + 16, 0)
    return SUCCESS if result == graphs.UPDATE_SUCCESS else graphs.ERR_UPDATE_FAILURE


# ------------------------------------------------------------------ host functions

@implements(RUNTIME_API, "cudaLaunchHostFunc")
@implements(DRIVER_API, "cuLaunchHostFunc")
def launch_host_func(stream: int, fn: int, data: int) -> int:
    if not fn:
        return ERR_INVALID_VALUE
    if not capture.add(stream, graphs.HOST, (fn, data)):
        host_callbacks.run_in_order(stream, fn, data)
    return SUCCESS


@implements(RUNTIME_API, "cudaStreamAddCallback")
@implements(DRIVER_API, "cuStreamAddCallback")
def stream_add_callback(stream: int, callback: int, data: int, flags: int) -> int:
    if capture.of(stream) is not None:
        capture.check_sync(stream)        # not allowed while capturing: invalidates, raises
    host_callbacks.run_stream_callback(stream, callback, data, flags)
    return SUCCESS


