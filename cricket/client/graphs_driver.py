"""The driver API's part of graphs, stream capture and host functions (``cext/driver/graphs.c``):
kernel nodes named by CUfunction or CUkernel, and capture in front of the driver's launches,
asynchronous copies and memsets, event records and stream waits; the potentially unsafe calls
(synchronous copies and memsets, allocations, frees, context synchronisation) are checked against
the capture modes first. The entries both faces share are in ``graphs_api``. NVIDIA's cudart,
static or shared, reaches cricket's graphs through these.
"""
from __future__ import annotations

import logging
from collections.abc import Callable

from cricket.client import capture, driver_api, graphs, graphs_api, hostmem
from cricket.client.driver_face import DRIVER_API, DriverApiError
from cricket.client.faces import implements
from cricket.client.runtime import RUNTIME as rt
from cricket.cudafacts.curesult import INVALID_VALUE, SUCCESS

log = logging.getLogger(__name__)

H2D, D2H, D2D, UNIFIED = 1, 2, 3, 4            # cudaMemcpyKind, as graphs takes them


def _kernel(func: int, gx: int, gy: int, gz: int, bx: int, by: int, bz: int, shared: int, args: int,
            extra: int) -> tuple:
    """The parameters of a kernel node from CUDA_KERNEL_NODE_PARAMS' words (or a launch's)."""
    f = driver_api._function(func)
    refused = driver_api._launch_refused(f, gx, gy, gz, bx, by, bz, shared)
    if refused:
        raise DriverApiError(refused, f"kernel node {f.name}: grid {(gx, gy, gz)}, block {(bx, by, bz)}, "
                             f"{shared} bytes of shared memory")
    if args and extra or not args and not extra and f.param_size:
        raise DriverApiError(INVALID_VALUE, f"kernel node {f.name}: give kernelParams or extra")
    if args:
        data = hostmem.pack_params(args, f.layout, f.param_size) if f.layout else bytes(f.param_size)
    else:
        data = driver_api._extra_params(extra, f) if extra else b""
    return graphs.kernel_params(f.server, (gx, gy, gz), (bx, by, bz), shared, data, func, f.layout)


@implements(DRIVER_API, "cuGraphAddKernelNode")
def graph_add_kernel_node(pnode: int, graph: int, deps: int, count: int, *words: int) -> int:
    return graphs_api.add_node(pnode, graph, deps, count, graphs.KERNEL, _kernel(*words))


@implements(DRIVER_API, "cuGraphKernelNodeSetParams")
def graph_kernel_node_set_params(node: int, *words: int) -> int:
    return graphs_api.set_kernel_node(node, _kernel(*words))


@implements(DRIVER_API, "cuGraphExecKernelNodeSetParams")
def graph_exec_kernel_node_set_params(exec_: int, node: int, *words: int) -> int:
    graphs.set_exec_node_params(graphs.exec_graph(exec_), node, graphs.KERNEL, _kernel(*words))
    return SUCCESS


# ------------------------------------------------------------------ capture in front of the driver's work

def _launch(func: int, gx: int, gy: int, gz: int, bx: int, by: int, bz: int, shared: int, stream: int,
            args: int, extra: int, *attributes: int) -> int | None:
    if capture.of(stream) is None:
        capture.check_implicit(stream)
        return None
    return capture.captured(stream, graphs.KERNEL, _kernel(func, gx, gy, gz, bx, by, bz, shared, args, extra))


def _copy(kind: int) -> Callable[..., int | None]:
    def copy(dst: int, src: int, count: int, stream: int, is_async: int) -> int | None:
        if not is_async:
            return capture.check_unsafe()
        if capture.of(stream) is None:
            capture.check_implicit(stream)
            return None
        return capture.captured(stream, graphs.MEMCPY, (dst, src, count, rt.kind_of(dst, src, kind)), not count)
    return copy


def _memset(dst: int, value: int, count: int, element_size: int, stream: int, is_async: int) -> int | None:
    if not is_async:
        return capture.check_unsafe()
    return capture.captured(stream, graphs.MEMSET, (dst, value, element_size, count, 1, count * element_size),
                            not count)


_unsafe = capture.check_unsafe
for _name, _hook in (("cuLaunchKernel", _launch), ("cuLaunchKernelEx", _launch),
                     ("cuMemcpyHtoD", _copy(H2D)), ("cuMemcpyDtoH", _copy(D2H)), ("cuMemcpyDtoD", _copy(D2D)),
                     ("cuMemcpy", _copy(UNIFIED)), ("cuMemset", _memset), ("cuMemAlloc", _unsafe),
                     ("cuMemFree", _unsafe), ("cuMemHostAlloc", _unsafe), ("cuMemFreeHost", _unsafe),
                     ("cuCtxSynchronize", _unsafe), ("cuStreamSynchronize", capture.check_sync),
                     ("cuStreamQuery", capture.check_sync), ("cuEventSynchronize", capture.check_event),
                     ("cuEventQuery", capture.check_event), ("cuEventRecord", capture.record_event),
                     ("cuStreamWaitEvent", capture.wait_event)):
    capture.hook(DRIVER_API, _name, _hook)
