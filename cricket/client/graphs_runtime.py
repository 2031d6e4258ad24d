"""The runtime API's part of graphs, stream capture and host functions (``cext/preload/graphs.c``,
``capture.c``): kernel nodes named by host function, and capture in front of the runtime's work;
the entries both faces share are in ``graphs_api``.

Capture sits in front of the runtime's launches, asynchronous copies and memsets, event records
and stream waits (``capture.hook``): on a capturing stream they become graph nodes; the
potentially unsafe calls (synchronous copies and memsets, allocations, frees, device and
legacy-stream synchronisation) are checked against the capture modes first.
"""
from __future__ import annotations

import logging

from cricket.client import capture, graphs, graphs_api, hostmem
from cricket.client import runtime_calls
from cricket.client.errors import ERR_INVALID_VALUE, ERR_NOT_SUPPORTED, CudaRuntimeError
from cricket.client.faces import implements
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


def _kernel(func: int, gxy: int, gz: int, bxy: int, bz: int, shared: int, args: int, extra: int) -> tuple:
    """The parameters of a kernel node from cudaKernelNodeParams' words."""
    if extra or (not args and func and rt.kernel(func).param_size):
        raise CudaRuntimeError(ERR_INVALID_VALUE if not extra else ERR_NOT_SUPPORTED,
                               "kernel node arguments: give kernelParams (extra is not supported)")
    k = rt.kernel(func)
    grid, block = runtime_calls._dim(gxy, gz), runtime_calls._dim(bxy, bz)
    runtime_calls._check_config(grid, block, shared)
    params = hostmem.pack_params(args, k.layout, k.param_size) if k.layout else bytes(k.param_size)
    return graphs.kernel_params(k.function, grid, block, shared, params, func, k.layout)


# ------------------------------------------------------------------ kernel nodes

@implements(RUNTIME_API, "cudaGraphAddKernelNode")
def graph_add_kernel_node(pnode: int, graph: int, deps: int, count: int, func: int, gxy: int, gz: int,
                          bxy: int, bz: int, shared: int, args: int, extra: int) -> int:
    return graphs_api.add_node(pnode, graph, deps, count, graphs.KERNEL, _kernel(func, gxy, gz, bxy, bz, shared, args, extra))


@implements(RUNTIME_API, "cudaGraphKernelNodeSetParams")
def graph_kernel_node_set_params(node: int, func: int, gxy: int, gz: int, bxy: int, bz: int, shared: int,
                                 args: int, extra: int) -> int:
    return graphs_api.set_kernel_node(node, _kernel(func, gxy, gz, bxy, bz, shared, args, extra))


@implements(RUNTIME_API, "cudaGraphExecKernelNodeSetParams")
def graph_exec_kernel_node_set_params(exec_: int, node: int, func: int, gxy: int, gz: int, bxy: int, bz: int,
                                      shared: int, args: int, extra: int) -> int:
    graphs.set_exec_node_params(graphs.exec_graph(exec_), node, graphs.KERNEL,
                                _kernel(func, gxy, gz, bxy, bz, shared, args, extra))
    return SUCCESS


# ------------------------------------------------------------------ capture in front of the runtime's work

def _launch(func: int, gxy: int, gz: int, bxy: int, bz: int, args: int, shared: int, stream: int,
            *attributes: int) -> int | None:
    if capture.of(stream) is None:
        capture.check_implicit(stream)
        return None
    return capture.captured(stream, graphs.KERNEL, _kernel(func, gxy, gz, bxy, bz, shared, args, 0))


def _memcpy_async(dst: int, src: int, count: int, kind: int, stream: int) -> int | None:
    if capture.of(stream) is None:
        capture.check_implicit(stream)
        return None
    return capture.captured(stream, graphs.MEMCPY, (dst, src, count, rt.kind_of(dst, src, kind)), not count)


def _memcpy_2d(dst: int, dpitch: int, src: int, spitch: int, width: int, height: int, kind: int,
               stream: int, sync: int) -> int | None:
    if sync:
        return capture.check_unsafe()
    if capture.of(stream) is None:
        capture.check_implicit(stream)
        return None
    kind = rt.kind_of(dst, src, kind)
    for row in range(height):
        capture.add(stream, graphs.MEMCPY, (dst + row * dpitch, src + row * spitch, width, kind))
    return SUCCESS


def _memset(ptr: int, value: int, count: int, stream: int, sync: int) -> int | None:
    if sync:
        return capture.check_unsafe()
    return capture.captured(stream, graphs.MEMSET, (ptr, value, 1, count, 1, count), not count)


_unsafe = capture.check_unsafe
for _name, _hook in (("cudaLaunchKernel", _launch), ("cudaLaunchKernelExC", _launch),
                     ("cudaMemcpyAsync", _memcpy_async), ("cudaMemcpy2DAsync", _memcpy_2d),
                     ("cudaMemsetAsync", _memset), ("cudaMemcpy", _unsafe), ("cudaMemcpy_ptds", _unsafe),
                     ("cudaMalloc", _unsafe), ("cudaMallocPitch", _unsafe), ("cudaFree", _unsafe),
                     ("cudaMallocHost", _unsafe), ("cudaHostAlloc", _unsafe), ("cudaFreeHost", _unsafe),
                     ("cudaDeviceSynchronize", _unsafe), ("cudaStreamSynchronize", capture.check_sync),
                     ("cudaStreamQuery", capture.check_sync), ("cudaEventSynchronize", capture.check_event),
                     ("cudaEventQuery", capture.check_event), ("cudaEventRecord", capture.record_event),
                     ("cudaStreamWaitEvent", capture.wait_event)):
    capture.hook(RUNTIME_API, _name, _hook)
