/* CUDA graphs, stream capture and host functions of the driver API, forwarded to
 * cricket.client.graphs_driver (which shares graphs and capture state with the runtime face).
 * Descriptors are flattened here into words, since only the headers know their layout. The
 * versions are those CUDA 13's cudart asks cuGetProcAddress for; older ones stay stubs. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "driver.h"

#define U(x) ((uint64_t)(uintptr_t)(x))
#define FWD(name, ...) cricket_drv_forward(name, (const uint64_t[]){ __VA_ARGS__ }, \
                                           (int)(sizeof((const uint64_t[]){ __VA_ARGS__ }) / sizeof(uint64_t)))
/* A node's own CUfunction, or the CUkernel (the same handle in cricket) when func is NULL. */
#define KERNEL_WORDS(p) U((p)->func ? (p)->func : (CUfunction)(p)->kern), (uint64_t)(p)->gridDimX, \
                        (uint64_t)(p)->gridDimY, (uint64_t)(p)->gridDimZ, (uint64_t)(p)->blockDimX, \
                        (uint64_t)(p)->blockDimY, (uint64_t)(p)->blockDimZ, (uint64_t)(p)->sharedMemBytes, \
                        U((p)->kernelParams), U((p)->extra)

/* A release after the client shut down succeeds: the server freed what the session held when its
 * connection closed (as forward.c's releases; CuPy destroys its graphs while Python finalises). */
static CUresult released(CUresult rc)
{
    return rc == CUDA_ERROR_DEINITIALIZED ? CUDA_SUCCESS : rc;
}

/* ------------------------------------------------------------------ capture */

CRICKET_DRV_EXPORT_PAIR_BODY(cuStreamBeginCapture_v2, cuStreamBeginCapture_v2_ptsz, (CUstream hStream, CUstreamCaptureMode mode),
                             FWD("cuStreamBeginCapture", U(hStream), (uint64_t)mode))
CRICKET_DRV_EXPORT_PAIR_BODY(cuStreamEndCapture, cuStreamEndCapture_ptsz, (CUstream hStream, CUgraph *phGraph),
                             FWD("cuStreamEndCapture", U(hStream), U(phGraph)))
/* Once the client is gone no stream captures (destructors ask while the process exits). */
static CUresult is_capturing(CUstream stream, CUstreamCaptureStatus *status)
{
    CUresult rc = FWD("cuStreamIsCapturing", U(stream), U(status));
    if (rc == CUDA_ERROR_DEINITIALIZED && status) {
        *status = CU_STREAM_CAPTURE_STATUS_NONE;
        return CUDA_SUCCESS;
    }
    return rc;
}
CRICKET_DRV_EXPORT_PAIR_BODY(cuStreamIsCapturing, cuStreamIsCapturing_ptsz,
                             (CUstream hStream, CUstreamCaptureStatus *captureStatus),
                             is_capturing(hStream, captureStatus))

static CUresult capture_info(CUstream stream, CUstreamCaptureStatus *status, cuuint64_t *id, CUgraph *graph,
                             const CUgraphNode **deps, const CUgraphEdgeData **edges, size_t *count)
{
    if (edges)
        *edges = NULL;               /* every edge is a default one */
    return FWD("cuStreamGetCaptureInfo", U(stream), U(status), U(id), U(graph), U(deps), U(count));
}
CRICKET_DRV_EXPORT_PAIR_BODY(cuStreamGetCaptureInfo_v3, cuStreamGetCaptureInfo_v3_ptsz,
                             (CUstream hStream, CUstreamCaptureStatus *captureStatus_out, cuuint64_t *id_out,
                              CUgraph *graph_out, const CUgraphNode **dependencies_out,
                              const CUgraphEdgeData **edgeData_out, size_t *numDependencies_out),
                             capture_info(hStream, captureStatus_out, id_out, graph_out, dependencies_out, edgeData_out,
                                          numDependencies_out))
CRICKET_DRV_EXPORT_PAIR_BODY(cuStreamUpdateCaptureDependencies_v2, cuStreamUpdateCaptureDependencies_v2_ptsz,
                             (CUstream hStream, CUgraphNode *dependencies, const CUgraphEdgeData *dependencyData,
                              size_t numDependencies, unsigned int flags),
                             FWD("cuStreamUpdateCaptureDependencies", U(hStream), U(dependencies), U(dependencyData),
                                 numDependencies, flags))
CRICKET_DRV_EXPORT CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{ return FWD("cuThreadExchangeStreamCaptureMode", U(mode)); }

/* ------------------------------------------------------------------ graphs and nodes */

CRICKET_DRV_EXPORT CUresult cuGraphCreate(CUgraph *phGraph, unsigned int flags)
{ return FWD("cuGraphCreate", U(phGraph), flags); }
CRICKET_DRV_EXPORT CUresult cuGraphDestroy(CUgraph hGraph) { return released(FWD("cuGraphDestroy", U(hGraph))); }
CRICKET_DRV_EXPORT CUresult cuGraphClone(CUgraph *phGraphClone, CUgraph originalGraph)
{ return FWD("cuGraphClone", U(phGraphClone), U(originalGraph)); }
CRICKET_DRV_EXPORT CUresult cuGraphGetNodes(CUgraph hGraph, CUgraphNode *nodes, size_t *numNodes)
{ return FWD("cuGraphGetNodes", U(hGraph), U(nodes), U(numNodes)); }
CRICKET_DRV_EXPORT CUresult cuGraphGetRootNodes(CUgraph hGraph, CUgraphNode *rootNodes, size_t *numRootNodes)
{ return FWD("cuGraphGetRootNodes", U(hGraph), U(rootNodes), U(numRootNodes)); }
CRICKET_DRV_EXPORT CUresult cuGraphNodeGetType(CUgraphNode hNode, CUgraphNodeType *type)
{ return FWD("cuGraphNodeGetType", U(hNode), U(type)); }
CRICKET_DRV_EXPORT CUresult cuGraphNodeGetDependencies_v2(CUgraphNode hNode, CUgraphNode *dependencies,
                                                          CUgraphEdgeData *edgeData, size_t *numDependencies)
{ return FWD("cuGraphNodeGetDependencies", U(hNode), U(dependencies), U(edgeData), U(numDependencies)); }
CRICKET_DRV_EXPORT CUresult cuGraphDestroyNode(CUgraphNode hNode) { return released(FWD("cuGraphDestroyNode", U(hNode))); }
CRICKET_DRV_EXPORT CUresult cuGraphAddDependencies_v2(CUgraph hGraph, const CUgraphNode *from, const CUgraphNode *to,
                                                      const CUgraphEdgeData *edgeData, size_t numDependencies)
{ return FWD("cuGraphAddDependencies", U(hGraph), U(from), U(to), U(edgeData), numDependencies); }

CRICKET_DRV_EXPORT CUresult cuGraphAddKernelNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                                    size_t numDependencies, const CUDA_KERNEL_NODE_PARAMS *p)
{
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    return FWD("cuGraphAddKernelNode", U(phGraphNode), U(hGraph), U(dependencies), numDependencies, KERNEL_WORDS(p));
}
CRICKET_DRV_EXPORT CUresult cuGraphKernelNodeSetParams_v2(CUgraphNode hNode, const CUDA_KERNEL_NODE_PARAMS *p)
{
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    return FWD("cuGraphKernelNodeSetParams", U(hNode), KERNEL_WORDS(p));
}
CRICKET_DRV_EXPORT CUresult cuGraphExecKernelNodeSetParams_v2(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                              const CUDA_KERNEL_NODE_PARAMS *p)
{
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    return FWD("cuGraphExecKernelNodeSetParams", U(hGraphExec), U(hNode), KERNEL_WORDS(p));
}
/* Python writes the fields the runtime's struct shares (func to extra, offsets 0-48). */
CRICKET_DRV_EXPORT CUresult cuGraphKernelNodeGetParams_v2(CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS *p)
{
    _Static_assert(offsetof(CUDA_KERNEL_NODE_PARAMS, kernelParams) == 40, "CUDA_KERNEL_NODE_PARAMS layout");
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    p->kern = NULL;
    p->ctx = NULL;
    return FWD("cuGraphKernelNodeGetParams", U(hNode), U(p));
}

/* A copy between linear memory that is one contiguous range (no arrays, no offsets, rows as wide
 * as their pitch) is a 1D copy; anything else is not supported here yet. */
CRICKET_DRV_EXPORT CUresult cuGraphAddMemcpyNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                                 size_t numDependencies, const CUDA_MEMCPY3D *c, CUcontext ctx)
{
    if (!c)
        return CUDA_ERROR_INVALID_VALUE;
    size_t rows = c->Height * c->Depth;
    int flat = c->srcMemoryType != CU_MEMORYTYPE_ARRAY && c->dstMemoryType != CU_MEMORYTYPE_ARRAY
               && !c->srcXInBytes && !c->srcY && !c->srcZ && !c->dstXInBytes && !c->dstY && !c->dstZ
               && (rows <= 1 || (c->srcPitch == c->WidthInBytes && c->dstPitch == c->WidthInBytes));
    if (!flat)
        return CUDA_ERROR_NOT_SUPPORTED;
    int src_dev = c->srcMemoryType != CU_MEMORYTYPE_HOST, dst_dev = c->dstMemoryType != CU_MEMORYTYPE_HOST;
    uint64_t src = c->srcMemoryType == CU_MEMORYTYPE_HOST ? U(c->srcHost) : c->srcDevice;
    uint64_t dst = c->dstMemoryType == CU_MEMORYTYPE_HOST ? U(c->dstHost) : c->dstDevice;
    uint64_t kind = c->srcMemoryType == CU_MEMORYTYPE_UNIFIED || c->dstMemoryType == CU_MEMORYTYPE_UNIFIED
                    ? 4 : (uint64_t)(src_dev * 2 + dst_dev);
    return FWD("cuGraphAddMemcpyNode", U(phGraphNode), U(hGraph), U(dependencies), numDependencies, dst, src,
               c->WidthInBytes * (rows ? rows : 1), kind);
}

CRICKET_DRV_EXPORT CUresult cuGraphAddMemsetNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                                 size_t numDependencies, const CUDA_MEMSET_NODE_PARAMS *p, CUcontext ctx)
{
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    return FWD("cuGraphAddMemsetNode", U(phGraphNode), U(hGraph), U(dependencies), numDependencies, p->dst,
               (uint64_t)p->value, (uint64_t)p->elementSize, p->width, p->height, p->pitch);
}

CRICKET_DRV_EXPORT CUresult cuGraphAddHostNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                               size_t numDependencies, const CUDA_HOST_NODE_PARAMS *p)
{
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    return FWD("cuGraphAddHostNode", U(phGraphNode), U(hGraph), U(dependencies), numDependencies, U(p->fn),
               U(p->userData));
}
CRICKET_DRV_EXPORT CUresult cuGraphAddChildGraphNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                                     size_t numDependencies, CUgraph childGraph)
{ return FWD("cuGraphAddChildGraphNode", U(phGraphNode), U(hGraph), U(dependencies), numDependencies, U(childGraph)); }
CRICKET_DRV_EXPORT CUresult cuGraphAddEmptyNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                                size_t numDependencies)
{ return FWD("cuGraphAddEmptyNode", U(phGraphNode), U(hGraph), U(dependencies), numDependencies); }
CRICKET_DRV_EXPORT CUresult cuGraphAddEventRecordNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                                      size_t numDependencies, CUevent event)
{ return FWD("cuGraphAddEventRecordNode", U(phGraphNode), U(hGraph), U(dependencies), numDependencies, U(event)); }
CRICKET_DRV_EXPORT CUresult cuGraphAddEventWaitNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                                    size_t numDependencies, CUevent event)
{ return FWD("cuGraphAddEventWaitNode", U(phGraphNode), U(hGraph), U(dependencies), numDependencies, U(event)); }

/* ------------------------------------------------------------------ executable graphs */

CRICKET_DRV_EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph, unsigned long long flags)
{ return FWD("cuGraphInstantiate", U(phGraphExec), U(hGraph), flags); }
CRICKET_DRV_EXPORT CUresult cuGraphExecDestroy(CUgraphExec hGraphExec)
{ return released(FWD("cuGraphExecDestroy", U(hGraphExec))); }
CRICKET_DRV_EXPORT_PAIR_BODY(cuGraphLaunch, cuGraphLaunch_ptsz, (CUgraphExec hGraphExec, CUstream hStream),
                             FWD("cuGraphLaunch", U(hGraphExec), U(hStream)))
CRICKET_DRV_EXPORT_PAIR_BODY(cuGraphUpload, cuGraphUpload_ptsz, (CUgraphExec hGraphExec, CUstream hStream),
                             FWD("cuGraphUpload", U(hGraphExec), U(hStream)))
CRICKET_DRV_EXPORT CUresult cuGraphExecUpdate_v2(CUgraphExec hGraphExec, CUgraph hGraph, CUgraphExecUpdateResultInfo *resultInfo)
{ return FWD("cuGraphExecUpdate", U(hGraphExec), U(hGraph), U(resultInfo)); }

/* ------------------------------------------------------------------ host functions */

CRICKET_DRV_EXPORT_PAIR_BODY(cuLaunchHostFunc, cuLaunchHostFunc_ptsz, (CUstream hStream, CUhostFn fn, void *userData),
                             FWD("cuLaunchHostFunc", U(hStream), U(fn), U(userData)))
CRICKET_DRV_EXPORT_PAIR_BODY(cuStreamAddCallback, cuStreamAddCallback_ptsz,
                             (CUstream hStream, CUstreamCallback callback, void *userData, unsigned int flags),
                             FWD("cuStreamAddCallback", U(hStream), U(callback), U(userData), flags))
