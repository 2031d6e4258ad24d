/* Stream-capture queries, answered without a round trip: cricket does not capture streams into
 * graphs (cudaStreamBeginCapture returns cudaErrorNotSupported), so no stream is ever capturing.
 * PyTorch asks before most allocations and copies. The handle is not checked here: a stream the
 * server does not know fails at its next real use. */
#include <stddef.h>
#include <cuda_runtime_api.h>
#include "shim.h"

/* Only cudaThreadExchangeStreamCaptureMode reads it; kept so a program gets back what it set. */
static __thread enum cudaStreamCaptureMode capture_mode = cudaStreamCaptureModeGlobal;

static cudaError_t not_capturing(enum cudaStreamCaptureStatus *status)
{
    if (!status)
        return cudaErrorInvalidValue;
    *status = cudaStreamCaptureStatusNone;
    return cudaSuccess;
}

CRICKET_EXPORT cudaError_t cudaStreamIsCapturing(cudaStream_t stream, enum cudaStreamCaptureStatus *pCaptureStatus)
{ (void)stream; return not_capturing(pCaptureStatus); }

/* The other outputs are documented as undefined when the stream is not capturing; zeroed here. */
static cudaError_t capture_info(enum cudaStreamCaptureStatus *status, unsigned long long *id, cudaGraph_t *graph,
                                const cudaGraphNode_t **deps, const cudaGraphEdgeData **edges, size_t *count)
{
    if (id)
        *id = 0;
    if (graph)
        *graph = NULL;
    if (deps)
        *deps = NULL;
    if (edges)
        *edges = NULL;
    if (count)
        *count = 0;
    return not_capturing(status);
}

CRICKET_EXPORT cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream, enum cudaStreamCaptureStatus *captureStatus_out,
                                                    unsigned long long *id_out, cudaGraph_t *graph_out,
                                                    const cudaGraphNode_t **dependencies_out,
                                                    const cudaGraphEdgeData **edgeData_out, size_t *numDependencies_out)
{
    (void)stream;
    return capture_info(captureStatus_out, id_out, graph_out, dependencies_out, edgeData_out, numDependencies_out);
}

/* The per-thread default stream is a stream like any other here. */
CRICKET_EXPORT cudaError_t cudaStreamIsCapturing_ptsz(cudaStream_t, enum cudaStreamCaptureStatus *)
    __attribute__((alias("cudaStreamIsCapturing")));
CRICKET_EXPORT cudaError_t cudaStreamGetCaptureInfo_ptsz(cudaStream_t, enum cudaStreamCaptureStatus *, unsigned long long *,
                                                         cudaGraph_t *, const cudaGraphNode_t **,
                                                         const cudaGraphEdgeData **, size_t *)
    __attribute__((alias("cudaStreamGetCaptureInfo")));

CRICKET_EXPORT cudaError_t cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode *mode)
{
    if (!mode || (*mode != cudaStreamCaptureModeGlobal && *mode != cudaStreamCaptureModeThreadLocal
                  && *mode != cudaStreamCaptureModeRelaxed))
        return cudaErrorInvalidValue;
    enum cudaStreamCaptureMode previous = capture_mode;
    capture_mode = *mode;
    *mode = previous;
    return cudaSuccess;
}
