"""The runtime API's graphs, stream capture and host functions (``cext/preload/graphs.c``,
``capture.c``): thin entries over ``graphs``, ``capture`` and ``host_callbacks``.

Capture sits in front of the runtime's launches, asynchronous copies and memsets, event records
and stream waits (``capture.hook``): on a capturing stream they become graph nodes; the
potentially unsafe calls (synchronous copies and memsets, allocations, frees, device and
legacy-stream synchronisation) are checked against the capture modes first.
"""
from __future__ import annotations

import ctypes
import logging

from cricket.client import capture, graphs, hostmem, host_callbacks
from cricket.client import runtime_calls
from cricket.client.errors import ERR_INVALID_VALUE, ERR_NOT_SUPPORTED, CudaRuntimeError
from cricket.client.faces import implements
from cricket.client.graphs import D2D, D2H, H2D, H2H
from cricket.client.runtime import RUNTIME as rt
from cricket.client.runtime_face import RUNTIME_API

log = logging.getLogger(__name__)

SUCCESS = 0

# The exports of capture.c and graphs.c (runtime_api.FORWARDED takes them).
SHIM_EXPORTS: tuple[str, ...] = (
    "cudaStreamBeginCapture", "cudaStreamBeginCapture_ptsz", "cudaStreamEndCapture", "cudaStreamEndCapture_ptsz",
    "cudaStreamIsCapturing", "cudaStreamIsCapturing_ptsz", "cudaStreamGetCaptureInfo",
    "cudaStreamGetCaptureInfo_ptsz", "cudaStreamUpdateCaptureDependencies",
    "cudaStreamUpdateCaptureDependencies_ptsz", "cudaThreadExchangeStreamCaptureMode",
    "cudaGraphCreate", "cudaGraphDestroy", "cudaGraphClone", "cudaGraphGetNodes", "cudaGraphGetRootNodes",
    "cudaGraphNodeGetType", "cudaGraphNodeGetDependencies", "cudaGraphDestroyNode", "cudaGraphAddDependencies",
    "cudaGraphAddKernelNode", "cudaGraphKernelNodeSetParams", "cudaGraphExecKernelNodeSetParams",
    "cudaGraphKernelNodeGetParams", "cudaGraphAddMemcpyNode1D", "cudaGraphAddMemcpyNode",
    "cudaGraphAddMemsetNode", "cudaGraphAddHostNode", "cudaGraphAddChildGraphNode", "cudaGraphAddEmptyNode",
    "cudaGraphAddEventRecordNode", "cudaGraphAddEventWaitNode", "cudaGraphInstantiate",
    "cudaGraphInstantiateWithFlags", "cudaGraphExecDestroy", "cudaGraphLaunch", "cudaGraphLaunch_ptsz",
    "cudaGraphUpload", "cudaGraphUpload_ptsz", "cudaGraphExecUpdate", "cudaLaunchHostFunc",
    "cudaLaunchHostFunc_ptsz", "cudaStreamAddCallback", "cudaStreamAddCallback_ptsz",
)


def _out(ptr: int) -> int:
    if not ptr:
        raise CudaRuntimeError(ERR_INVALID_VALUE, "an output pointer is NULL")
    return ptr


def _kernel(func: int, gxy: int, gz: int, bxy: int, bz: int, shared: int, args: int, extra: int) -> tuple:
    """The parameters of a kernel node from cudaKernelNodeParams' words."""
    if extra or (not args and func and rt.kernel(func).param_size):
        raise CudaRuntimeError(ERR_INVALID_VALUE if not extra else ERR_NOT_SUPPORTED,
                               "kernel node arguments: give kernelParams (extra is not supported)")
    k = rt.kernel(func)
    grid, block = runtime_calls._dim(gxy, gz), runtime_calls._dim(bxy, bz)
    runtime_calls._check_config(grid, block, shared)
    params = hostmem.pack_params(args, k.layout, k.param_size) if k.layout else bytes(k.param_size)
    return graphs.kernel_params(k.function, grid, block, shared, params, func)


def _add(pnode: int, graph: int, deps: int, count: int, kind: int, params: tuple) -> int:
    _out(pnode)
    g = graphs.graph(graph)
    n = g.add(kind, params, graphs.nodes_at(deps, count))
    hostmem.store_u64(pnode, n.handle)
    return SUCCESS


# ------------------------------------------------------------------ capture

@implements(RUNTIME_API, "cudaStreamBeginCapture")
def stream_begin_capture(stream: int, mode: int) -> int:
    capture.begin(stream, mode)
    return SUCCESS


@implements(RUNTIME_API, "cudaStreamEndCapture")
def stream_end_capture(stream: int, pgraph: int) -> int:
    _out(pgraph)
    try:
        g = capture.end(stream)
    except CudaRuntimeError:
        hostmem.store_u64(pgraph, 0)
        raise
    hostmem.store_u64(pgraph, g.handle)
    return SUCCESS


@implements(RUNTIME_API, "cudaStreamIsCapturing")
def stream_is_capturing(stream: int, pstatus: int) -> int:
    _out(pstatus)
    rt.stream(stream)                       # an unknown stream is an error
    hostmem.store_i32(pstatus, capture.status(stream)[0])
    return SUCCESS


class _CaptureDeps:
    """The array cudaStreamGetCaptureInfo hands out: valid until the next call on the thread."""
    array = None


@implements(RUNTIME_API, "cudaStreamGetCaptureInfo")
def stream_get_capture_info(stream: int, pstatus: int, pid: int, pgraph: int, pdeps: int, pcount: int) -> int:
    _out(pstatus)
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
        _CaptureDeps.array = array
        hostmem.store_u64(pdeps, ctypes.addressof(array) if tails else 0)
    if pcount:
        hostmem.store_u64(pcount, len(tails))
    return SUCCESS


@implements(RUNTIME_API, "cudaStreamUpdateCaptureDependencies")
def stream_update_capture_dependencies(stream: int, deps: int, edge_data: int, count: int, flags: int) -> int:
    if edge_data:
        return ERR_NOT_SUPPORTED
    capture.update_dependencies(stream, graphs.nodes_at(deps, count), flags)
    return SUCCESS


@implements(RUNTIME_API, "cudaThreadExchangeStreamCaptureMode")
def thread_exchange_stream_capture_mode(pmode: int) -> int:
    _out(pmode)
    hostmem.store_i32(pmode, capture.exchange_mode(ctypes.c_int32.from_address(pmode).value))
    return SUCCESS


# ------------------------------------------------------------------ graphs

@implements(RUNTIME_API, "cudaGraphCreate")
def graph_create(pgraph: int, flags: int) -> int:
    _out(pgraph)
    if flags:
        return ERR_INVALID_VALUE
    hostmem.store_u64(pgraph, graphs.create_graph().handle)
    return SUCCESS


@implements(RUNTIME_API, "cudaGraphDestroy")
def graph_destroy(graph: int) -> int:
    graphs.destroy_graph(graph)
    return SUCCESS


@implements(RUNTIME_API, "cudaGraphClone")
def graph_clone(pclone: int, graph: int) -> int:
    _out(pclone)
    hostmem.store_u64(pclone, graphs.graph(graph).clone()[0].handle)
    return SUCCESS


def _store_nodes(nodes: list, out: int, pcount: int) -> None:
    _out(pcount)
    if out:
        for i, n in enumerate(nodes[:hostmem.load_u64(pcount)]):
            hostmem.store_u64(out + 8 * i, n.handle)
    hostmem.store_u64(pcount, len(nodes))


@implements(RUNTIME_API, "cudaGraphGetNodes")
def graph_get_nodes(graph: int, out: int, pcount: int) -> int:
    _store_nodes(graphs.graph(graph).nodes, out, pcount)
    return SUCCESS


@implements(RUNTIME_API, "cudaGraphGetRootNodes")
def graph_get_root_nodes(graph: int, out: int, pcount: int) -> int:
    _store_nodes([n for n in graphs.graph(graph).nodes if not n.deps], out, pcount)
    return SUCCESS


@implements(RUNTIME_API, "cudaGraphNodeGetType")
def graph_node_get_type(node: int, ptype: int) -> int:
    _out(ptype)
    hostmem.store_i32(ptype, graphs.node(node).kind)
    return SUCCESS


@implements(RUNTIME_API, "cudaGraphNodeGetDependencies")
def graph_node_get_dependencies(node: int, out: int, edge_data: int, pcount: int) -> int:
    _store_nodes(graphs.node(node).deps, out, pcount)
    return SUCCESS


@implements(RUNTIME_API, "cudaGraphDestroyNode")
def graph_destroy_node(node: int) -> int:
    graphs.destroy_node(node)
    return SUCCESS


@implements(RUNTIME_API, "cudaGraphAddDependencies")
def graph_add_dependencies(graph: int, from_: int, to: int, edge_data: int, count: int) -> int:
    if edge_data:
        return ERR_NOT_SUPPORTED
    g = graphs.graph(graph)
    for a, b in zip(graphs.nodes_at(from_, count), graphs.nodes_at(to, count)):
        if a not in g.nodes or b not in g.nodes or a in b.deps:
            return ERR_INVALID_VALUE
        b.deps.append(a)
    return SUCCESS


@implements(RUNTIME_API, "cudaGraphAddKernelNode")
def graph_add_kernel_node(pnode: int, graph: int, deps: int, count: int, func: int, gxy: int, gz: int,
                          bxy: int, bz: int, shared: int, args: int, extra: int) -> int:
    return _add(pnode, graph, deps, count, graphs.KERNEL, _kernel(func, gxy, gz, bxy, bz, shared, args, extra))


@implements(RUNTIME_API, "cudaGraphKernelNodeSetParams")
def graph_kernel_node_set_params(node: int, func: int, gxy: int, gz: int, bxy: int, bz: int, shared: int,
                                 args: int, extra: int) -> int:
    n = graphs.node(node)
    if n.kind != graphs.KERNEL:
        return ERR_INVALID_VALUE
    n.params = _kernel(func, gxy, gz, bxy, bz, shared, args, extra)
    return SUCCESS


@implements(RUNTIME_API, "cudaGraphExecKernelNodeSetParams")
def graph_exec_kernel_node_set_params(exec_: int, node: int, func: int, gxy: int, gz: int, bxy: int, bz: int,
                                      shared: int, args: int, extra: int) -> int:
    graphs.set_exec_node_params(graphs.exec_graph(exec_), node, graphs.KERNEL,
                                _kernel(func, gxy, gz, bxy, bz, shared, args, extra))
    return SUCCESS


@implements(RUNTIME_API, "cudaGraphKernelNodeGetParams")
def graph_kernel_node_get_params(node: int, out: int) -> int:
    _out(out)
    n = graphs.node(node)
    if n.kind != graphs.KERNEL:
        return ERR_INVALID_VALUE
    _, grid, block, shared, params, func = n.params
    k = rt.kernel(func)
    buffer = ctypes.create_string_buffer(params, max(1, len(params)))
    pointers = (ctypes.c_void_p * max(1, len(k.layout)))(
        *[ctypes.addressof(buffer) + offset for offset, _ in k.layout])
    n.kept = (buffer, pointers)             # the struct points here until the node changes
    hostmem.store_u64(out, func)
    for i, v in enumerate((*grid, *block, shared)):
        hostmem.store_u32(out + 8 + 4 * i, v)
    hostmem.store_u64(out + 40, ctypes.addressof(pointers))
    hostmem.store_u64(out + 48, 0)
    return SUCCESS


@implements(RUNTIME_API, "cudaGraphAddMemcpyNode1D")
def graph_add_memcpy_node_1d(pnode: int, graph: int, deps: int, count: int, dst: int, src: int, size: int,
                             kind: int) -> int:
    return _add(pnode, graph, deps, count, graphs.MEMCPY, (dst, src, size, rt.kind_of(dst, src, kind)))


@implements(RUNTIME_API, "cudaGraphAddMemsetNode")
def graph_add_memset_node(pnode: int, graph: int, deps: int, count: int, dst: int, value: int, element_size: int,
                          width: int, height: int, pitch: int) -> int:
    if element_size not in (1, 2, 4) or not width or not height or (height > 1 and pitch < width * element_size):
        return ERR_INVALID_VALUE
    return _add(pnode, graph, deps, count, graphs.MEMSET, (dst, value, element_size, width, height, pitch))


@implements(RUNTIME_API, "cudaGraphAddHostNode")
def graph_add_host_node(pnode: int, graph: int, deps: int, count: int, fn: int, data: int) -> int:
    if not fn:
        return ERR_INVALID_VALUE
    return _add(pnode, graph, deps, count, graphs.HOST, (fn, data))


@implements(RUNTIME_API, "cudaGraphAddChildGraphNode")
def graph_add_child_graph_node(pnode: int, graph: int, deps: int, count: int, child: int) -> int:
    return _add(pnode, graph, deps, count, graphs.CHILD, (graphs.graph(child).clone()[0],))


@implements(RUNTIME_API, "cudaGraphAddEmptyNode")
def graph_add_empty_node(pnode: int, graph: int, deps: int, count: int) -> int:
    return _add(pnode, graph, deps, count, graphs.EMPTY, ())


@implements(RUNTIME_API, "cudaGraphAddEventRecordNode")
def graph_add_event_record_node(pnode: int, graph: int, deps: int, count: int, event: int) -> int:
    rt.event(event)
    return _add(pnode, graph, deps, count, graphs.EVENT_RECORD, (event,))


@implements(RUNTIME_API, "cudaGraphAddEventWaitNode")
def graph_add_event_wait_node(pnode: int, graph: int, deps: int, count: int, event: int) -> int:
    rt.event(event)
    return _add(pnode, graph, deps, count, graphs.EVENT_WAIT, (event,))


@implements(RUNTIME_API, "cudaGraphInstantiate")
def graph_instantiate(pexec: int, graph: int, flags: int) -> int:
    _out(pexec)
    hostmem.store_u64(pexec, graphs.instantiate(graphs.graph(graph)).handle)
    return SUCCESS


@implements(RUNTIME_API, "cudaGraphExecDestroy")
def graph_exec_destroy(exec_: int) -> int:
    graphs.destroy_exec(exec_)
    return SUCCESS


@implements(RUNTIME_API, "cudaGraphLaunch")
def graph_launch(exec_: int, stream: int) -> int:
    ex = graphs.exec_graph(exec_)
    if capture.of(stream) is None or not capture.add_graph(stream, ex.source):
        graphs.launch(ex, stream)
    return SUCCESS


@implements(RUNTIME_API, "cudaGraphUpload")
def graph_upload(exec_: int, stream: int) -> int:
    graphs.upload(graphs.exec_graph(exec_))
    return SUCCESS


@implements(RUNTIME_API, "cudaGraphExecUpdate")
def graph_exec_update(exec_: int, graph: int, info: int) -> int:
    result, failed = graphs.update(graphs.exec_graph(exec_), graphs.graph(graph))
    if info:
        hostmem.store_i32(info, result)
        hostmem.store_u64(info + 8, failed)
        hostmem.store_u64(info + 16, 0)
    return SUCCESS if result == graphs.UPDATE_SUCCESS else graphs.ERR_UPDATE_FAILURE


# ------------------------------------------------------------------ host functions

@implements(RUNTIME_API, "cudaLaunchHostFunc")
def launch_host_func(stream: int, fn: int, data: int) -> int:
    if not fn:
        return ERR_INVALID_VALUE
    if not capture.add(stream, graphs.HOST, (fn, data)):
        host_callbacks.run_in_order(stream, fn, data)
    return SUCCESS


@implements(RUNTIME_API, "cudaStreamAddCallback")
def stream_add_callback(stream: int, callback: int, data: int, flags: int) -> int:
    if capture.of(stream) is not None:
        capture.check_sync(stream)        # not allowed while capturing: invalidates, raises
    host_callbacks.run_stream_callback(stream, callback, data, flags)
    return SUCCESS


# ------------------------------------------------------------------ capture in front of the runtime's work

def _launch(func: int, gxy: int, gz: int, bxy: int, bz: int, args: int, shared: int, stream: int,
            *attributes: int) -> int | None:
    if capture.of(stream) is None:
        return None
    capture.add(stream, graphs.KERNEL, _kernel(func, gxy, gz, bxy, bz, shared, args, 0))
    return SUCCESS


def _memcpy_async(dst: int, src: int, count: int, kind: int, stream: int) -> int | None:
    if capture.of(stream) is None:
        return None
    if count:
        capture.add(stream, graphs.MEMCPY, (dst, src, count, rt.kind_of(dst, src, kind)))
    return SUCCESS


def _memcpy_2d(dst: int, dpitch: int, src: int, spitch: int, width: int, height: int, kind: int,
               stream: int, sync: int) -> int | None:
    if sync:
        capture.check_unsafe()
        return None
    if capture.of(stream) is None:
        return None
    kind = rt.kind_of(dst, src, kind)
    for row in range(height):
        capture.add(stream, graphs.MEMCPY, (dst + row * dpitch, src + row * spitch, width, kind))
    return SUCCESS


def _memset(ptr: int, value: int, count: int, stream: int, sync: int) -> int | None:
    if sync:
        capture.check_unsafe()
        return None
    if capture.of(stream) is None:
        return None
    if count:
        capture.add(stream, graphs.MEMSET, (ptr, value, 1, count, 1, count))
    return SUCCESS


def _unsafe(*args: int) -> None:
    capture.check_unsafe()


def _stream_sync(stream: int) -> None:
    capture.check_sync(stream)


def _event_sync(event: int) -> None:
    capture.check_event(event)


def _event_record(event: int, stream: int, *flags: int) -> int | None:
    return SUCCESS if capture.record_event(event, stream) else None


def _stream_wait(stream: int, event: int, flags: int) -> int | None:
    return SUCCESS if capture.wait_event(stream, event) else None


for _name, _hook in (("cudaLaunchKernel", _launch), ("cudaLaunchKernelExC", _launch),
                     ("cudaMemcpyAsync", _memcpy_async), ("cudaMemcpy2DAsync", _memcpy_2d),
                     ("cudaMemsetAsync", _memset), ("cudaMemcpy", _unsafe), ("cudaMemcpy_ptds", _unsafe),
                     ("cudaMalloc", _unsafe), ("cudaMallocPitch", _unsafe), ("cudaFree", _unsafe),
                     ("cudaMallocHost", _unsafe), ("cudaHostAlloc", _unsafe), ("cudaFreeHost", _unsafe),
                     ("cudaDeviceSynchronize", _unsafe), ("cudaStreamSynchronize", _stream_sync),
                     ("cudaEventSynchronize", _event_sync), ("cudaEventRecord", _event_record),
                     ("cudaStreamWaitEvent", _stream_wait)):
    capture.hook(RUNTIME_API, _name, _hook)
