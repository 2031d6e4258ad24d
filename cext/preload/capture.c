/* Stream capture (cricket.client.capture): capture state lives in the client, which both API faces
 * share, so every query goes there; torch asks before most allocations and copies, and the answer
 * costs one step into Python with no round trip to the server. */
#include <stddef.h>
#include <cuda_runtime_api.h>
#include "forward_call.h"

CRICKET_EXPORT cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{ FORWARD(U(stream), (uint64_t)mode); }
CRICKET_EXPORT cudaError_t cudaStreamBeginCapture_ptsz(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{ CALL_AS("cudaStreamBeginCapture", PT(stream), (uint64_t)mode); }
CRICKET_EXPORT cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *pGraph)
{ FORWARD(U(stream), U(pGraph)); }
CRICKET_EXPORT cudaError_t cudaStreamEndCapture_ptsz(cudaStream_t stream, cudaGraph_t *pGraph)
{ CALL_AS("cudaStreamEndCapture", PT(stream), U(pGraph)); }
CRICKET_EXPORT cudaError_t cudaStreamIsCapturing(cudaStream_t stream, enum cudaStreamCaptureStatus *pCaptureStatus)
{ FORWARD(U(stream), U(pCaptureStatus)); }
CRICKET_EXPORT cudaError_t cudaStreamIsCapturing_ptsz(cudaStream_t stream, enum cudaStreamCaptureStatus *pCaptureStatus)
{ CALL_AS("cudaStreamIsCapturing", PT(stream), U(pCaptureStatus)); }

/* Edge data is not kept (every edge is a default one): *edgeData_out is set to NULL. */
CRICKET_EXPORT cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream, enum cudaStreamCaptureStatus *captureStatus_out,
                                                    unsigned long long *id_out, cudaGraph_t *graph_out,
                                                    const cudaGraphNode_t **dependencies_out,
                                                    const cudaGraphEdgeData **edgeData_out, size_t *numDependencies_out)
{
    if (edgeData_out)
        *edgeData_out = NULL;
    FORWARD(U(stream), U(captureStatus_out), U(id_out), U(graph_out), U(dependencies_out), U(numDependencies_out));
}
CRICKET_EXPORT cudaError_t cudaStreamGetCaptureInfo_ptsz(cudaStream_t stream, enum cudaStreamCaptureStatus *captureStatus_out,
                                                         unsigned long long *id_out, cudaGraph_t *graph_out,
                                                         const cudaGraphNode_t **dependencies_out,
                                                         const cudaGraphEdgeData **edgeData_out, size_t *numDependencies_out)
{
    if (edgeData_out)
        *edgeData_out = NULL;
    CALL_AS("cudaStreamGetCaptureInfo", PT(stream), U(captureStatus_out), U(id_out), U(graph_out), U(dependencies_out),
            U(numDependencies_out));
}

/* Edge data other than the default (NULL) is refused in Python. */
CRICKET_EXPORT cudaError_t cudaStreamUpdateCaptureDependencies(cudaStream_t stream, cudaGraphNode_t *dependencies,
                                                               const cudaGraphEdgeData *dependencyData,
                                                               size_t numDependencies, unsigned int flags)
{ FORWARD(U(stream), U(dependencies), U(dependencyData), numDependencies, flags); }
CRICKET_EXPORT cudaError_t cudaStreamUpdateCaptureDependencies_ptsz(cudaStream_t stream, cudaGraphNode_t *dependencies,
                                                                    const cudaGraphEdgeData *dependencyData,
                                                                    size_t numDependencies, unsigned int flags)
{ CALL_AS("cudaStreamUpdateCaptureDependencies", PT(stream), U(dependencies), U(dependencyData), numDependencies, flags); }

CRICKET_EXPORT cudaError_t cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode *mode)
{ FORWARD(U(mode)); }
