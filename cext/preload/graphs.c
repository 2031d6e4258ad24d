/* CUDA graphs and host functions (cricket.client.graphs_runtime): descriptors are flattened here
 * into words, since only the headers know their layout; graphs live in the client. */
#include <stddef.h>
#include <cuda_runtime_api.h>
#include "forward_call.h"

#define KERNEL_WORDS(p) U((p)->func), DIM((p)->gridDim), DIM((p)->blockDim), (uint64_t)(p)->sharedMemBytes, \
                        U((p)->kernelParams), U((p)->extra)

CRICKET_EXPORT cudaError_t cudaGraphCreate(cudaGraph_t *pGraph, unsigned int flags) { FORWARD(U(pGraph), flags); }
CRICKET_EXPORT cudaError_t cudaGraphDestroy(cudaGraph_t graph) { FORWARD(U(graph)); }
CRICKET_EXPORT cudaError_t cudaGraphClone(cudaGraph_t *pGraphClone, cudaGraph_t originalGraph)
{ FORWARD(U(pGraphClone), U(originalGraph)); }
CRICKET_EXPORT cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t *nodes, size_t *numNodes)
{ FORWARD(U(graph), U(nodes), U(numNodes)); }
CRICKET_EXPORT cudaError_t cudaGraphGetRootNodes(cudaGraph_t graph, cudaGraphNode_t *pRootNodes, size_t *pNumRootNodes)
{ FORWARD(U(graph), U(pRootNodes), U(pNumRootNodes)); }
CRICKET_EXPORT cudaError_t cudaGraphNodeGetType(cudaGraphNode_t node, enum cudaGraphNodeType *pType)
{ FORWARD(U(node), U(pType)); }
CRICKET_EXPORT cudaError_t cudaGraphNodeGetDependencies(cudaGraphNode_t node, cudaGraphNode_t *pDependencies,
                                                        cudaGraphEdgeData *edgeData, size_t *pNumDependencies)
{ FORWARD(U(node), U(pDependencies), U(edgeData), U(pNumDependencies)); }
CRICKET_EXPORT cudaError_t cudaGraphDestroyNode(cudaGraphNode_t node) { FORWARD(U(node)); }
CRICKET_EXPORT cudaError_t cudaGraphAddDependencies(cudaGraph_t graph, const cudaGraphNode_t *from, const cudaGraphNode_t *to,
                                                    const cudaGraphEdgeData *edgeData, size_t numDependencies)
{ FORWARD(U(graph), U(from), U(to), U(edgeData), numDependencies); }

CRICKET_EXPORT cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                                  const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                                  const struct cudaKernelNodeParams *p)
{
    if (!p)
        return cudaErrorInvalidValue;
    FORWARD(U(pGraphNode), U(graph), U(pDependencies), numDependencies, KERNEL_WORDS(p));
}
CRICKET_EXPORT cudaError_t cudaGraphKernelNodeSetParams(cudaGraphNode_t node, const struct cudaKernelNodeParams *p)
{
    if (!p)
        return cudaErrorInvalidValue;
    FORWARD(U(node), KERNEL_WORDS(p));
}
CRICKET_EXPORT cudaError_t cudaGraphExecKernelNodeSetParams(cudaGraphExec_t hGraphExec, cudaGraphNode_t node,
                                                            const struct cudaKernelNodeParams *p)
{
    if (!p)
        return cudaErrorInvalidValue;
    FORWARD(U(hGraphExec), U(node), KERNEL_WORDS(p));
}
/* Python writes the struct (its layout: func 0, gridDim 8, blockDim 20, sharedMemBytes 32,
 * kernelParams 40, extra 48), with pointers to a copy of the arguments that the node keeps. */
CRICKET_EXPORT cudaError_t cudaGraphKernelNodeGetParams(cudaGraphNode_t node, struct cudaKernelNodeParams *pNodeParams)
{
    _Static_assert(offsetof(struct cudaKernelNodeParams, kernelParams) == 40, "cudaKernelNodeParams layout");
    FORWARD(U(node), U(pNodeParams));
}

CRICKET_EXPORT cudaError_t cudaGraphAddMemcpyNode1D(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                                    const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                                    void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{ FORWARD(U(pGraphNode), U(graph), U(pDependencies), numDependencies, U(dst), U(src), count, (uint64_t)kind); }

/* A 3D copy between linear memory that is one contiguous range (no arrays, no offsets, rows as wide
 * as their pitch) is a 1D copy; anything else is not supported here yet. */
CRICKET_EXPORT cudaError_t cudaGraphAddMemcpyNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                                  const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                                  const struct cudaMemcpy3DParms *p)
{
    if (!p)
        return cudaErrorInvalidValue;
    size_t width = p->extent.width, rows = p->extent.height * p->extent.depth;
    int flat = !p->srcArray && !p->dstArray && !p->srcPos.x && !p->srcPos.y && !p->srcPos.z && !p->dstPos.x
               && !p->dstPos.y && !p->dstPos.z && (rows <= 1 || (p->srcPtr.pitch == width && p->dstPtr.pitch == width));
    if (!flat)
        return cudaErrorNotSupported;
    CALL_AS("cudaGraphAddMemcpyNode1D", U(pGraphNode), U(graph), U(pDependencies), numDependencies, U(p->dstPtr.ptr),
            U(p->srcPtr.ptr), width * (rows ? rows : 1), (uint64_t)p->kind);
}

CRICKET_EXPORT cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                                  const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                                  const struct cudaMemsetParams *p)
{
    if (!p)
        return cudaErrorInvalidValue;
    FORWARD(U(pGraphNode), U(graph), U(pDependencies), numDependencies, U(p->dst), (uint64_t)p->value,
            (uint64_t)p->elementSize, p->width, p->height, p->pitch);
}

CRICKET_EXPORT cudaError_t cudaGraphAddHostNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                                const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                                const struct cudaHostNodeParams *p)
{
    if (!p)
        return cudaErrorInvalidValue;
    FORWARD(U(pGraphNode), U(graph), U(pDependencies), numDependencies, U(p->fn), U(p->userData));
}

CRICKET_EXPORT cudaError_t cudaGraphAddChildGraphNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                                      const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                                      cudaGraph_t childGraph)
{ FORWARD(U(pGraphNode), U(graph), U(pDependencies), numDependencies, U(childGraph)); }
CRICKET_EXPORT cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                                 const cudaGraphNode_t *pDependencies, size_t numDependencies)
{ FORWARD(U(pGraphNode), U(graph), U(pDependencies), numDependencies); }
CRICKET_EXPORT cudaError_t cudaGraphAddEventRecordNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                                       const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                                       cudaEvent_t event)
{ FORWARD(U(pGraphNode), U(graph), U(pDependencies), numDependencies, U(event)); }
CRICKET_EXPORT cudaError_t cudaGraphAddEventWaitNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                                     const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                                     cudaEvent_t event)
{ FORWARD(U(pGraphNode), U(graph), U(pDependencies), numDependencies, U(event)); }

CRICKET_EXPORT cudaError_t cudaGraphInstantiate(cudaGraphExec_t *pGraphExec, cudaGraph_t graph, unsigned long long flags)
{ FORWARD(U(pGraphExec), U(graph), flags); }
CRICKET_EXPORT cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
                                                         unsigned long long flags)
{ CALL_AS("cudaGraphInstantiate", U(pGraphExec), U(graph), flags); }
CRICKET_EXPORT cudaError_t cudaGraphExecDestroy(cudaGraphExec_t graphExec) { FORWARD(U(graphExec)); }
CRICKET_EXPORT cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream)
{ FORWARD(U(graphExec), U(stream)); }
CRICKET_EXPORT cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream)
{ CALL_AS("cudaGraphLaunch", U(graphExec), PT(stream)); }
CRICKET_EXPORT cudaError_t cudaGraphUpload(cudaGraphExec_t graphExec, cudaStream_t stream)
{ FORWARD(U(graphExec), U(stream)); }
CRICKET_EXPORT cudaError_t cudaGraphUpload_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream)
{ CALL_AS("cudaGraphUpload", U(graphExec), PT(stream)); }
CRICKET_EXPORT cudaError_t cudaGraphExecUpdate(cudaGraphExec_t hGraphExec, cudaGraph_t hGraph,
                                               cudaGraphExecUpdateResultInfo *resultInfo)
{ FORWARD(U(hGraphExec), U(hGraph), U(resultInfo)); }

CRICKET_EXPORT cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *userData)
{ FORWARD(U(stream), U(fn), U(userData)); }
CRICKET_EXPORT cudaError_t cudaLaunchHostFunc_ptsz(cudaStream_t stream, cudaHostFn_t fn, void *userData)
{ CALL_AS("cudaLaunchHostFunc", PT(stream), U(fn), U(userData)); }
CRICKET_EXPORT cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback, void *userData,
                                                 unsigned int flags)
{ FORWARD(U(stream), U(callback), U(userData), flags); }
CRICKET_EXPORT cudaError_t cudaStreamAddCallback_ptsz(cudaStream_t stream, cudaStreamCallback_t callback, void *userData,
                                                      unsigned int flags)
{ CALL_AS("cudaStreamAddCallback", PT(stream), U(callback), U(userData), flags); }
