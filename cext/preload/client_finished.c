/* Answers after the client finished. The client ends in Python's atexit handlers, but destructors
 * of objects Python frees later, while it finalises, still call the runtime, which NVIDIA's
 * runtime answers then (it is torn down after Python). PyTorch's tensors, events and pinned
 * blocks do: cudaGetDevice/cudaSetDevice, releases, and an event recorded and waited for before
 * a pinned block is reused. By then nothing can run on the device any more and the server frees
 * everything of the session when the connection closes, so releases succeed, work to wait for is
 * complete, and a new event is one that never has work. Everything else still fails with
 * cudaErrorCudartUnloading. */
#include <stdint.h>
#include <string.h>
#include "shim.h"

static __thread int current_device;    /* a thread starts on device 0, as in CUDA */
static char finished_event;         /* the event handed out after the client finished */

void cricket_note_device(int device)
{
    current_device = device;
}

int cricket_noted_device(void)
{
    return current_device;
}

static const char *const SETTLED[] = {
    "cudaFree", "cudaFreeHost", "cudaHostUnregister", "cudaStreamDestroy", "cudaEventDestroy",
    "cudaEventRecord", "cudaEventQuery", "cudaEventSynchronize", "cudaStreamQuery",
    "cudaStreamSynchronize", "cudaStreamWaitEvent", "cudaDeviceSynchronize",
    "cudaGraphDestroy", "cudaGraphExecDestroy", "cudaGraphDestroyNode",
};

cudaError_t cricket_after_client(const char *name, const uint64_t *args, int state)
{
    if (state != CRICKET_DEAD)
        return cricket_unavailable_error(state);
    if (strcmp(name, "cudaGetDevice") == 0 && args[0]) {
        *(int *)(uintptr_t)args[0] = current_device;
        return cudaSuccess;
    }
    if (strcmp(name, "cudaSetDevice") == 0 && (int)(int64_t)args[0] == current_device)
        return cudaSuccess;
    if (strcmp(name, "cudaEventCreateWithFlags") == 0 && args[0]) {
        *(cudaEvent_t *)(uintptr_t)args[0] = (cudaEvent_t)(void *)&finished_event;
        return cudaSuccess;
    }
    /* No stream captures once the client is gone (PyTorch's allocator asks while it frees at exit). */
    if ((strcmp(name, "cudaStreamIsCapturing") == 0 || strcmp(name, "cudaStreamGetCaptureInfo") == 0) && args[1]) {
        *(enum cudaStreamCaptureStatus *)(uintptr_t)args[1] = cudaStreamCaptureStatusNone;
        return cudaSuccess;
    }
    for (size_t i = 0; i < sizeof SETTLED / sizeof SETTLED[0]; i++)
        if (strcmp(name, SETTLED[i]) == 0)
            return cudaSuccess;
    return cricket_unavailable_error(state);
}
