/* How forward_runtime.c and the feature files beside it hand a runtime call to Python: the
 * arguments as 64-bit words, the function's name, the generic entry `cricket_call`. */
#ifndef CRICKET_FORWARD_CALL_H
#define CRICKET_FORWARD_CALL_H

#include <stdint.h>
#include "shim.h"

#define U(x) ((uint64_t)(uintptr_t)(x))
#define DIM(d) ((uint64_t)(d).x | ((uint64_t)(d).y << 32)), (uint64_t)(d).z
/* In the _ptsz/_ptds variants (nvcc --default-stream per-thread) stream 0 is the calling thread's
 * per-thread default stream, cudaStreamPerThread; the runtime creates one per thread and device. */
#define PER_THREAD U(cudaStreamPerThread)   /* driver_types.h states the handle */
#define PT(s) ((s) ? U(s) : PER_THREAD)

/* Forward this function's arguments to the Python implementation named `name`. */
#define CALL_AS(name, ...)                                                                   \
    do {                                                                                     \
        cricket_runtime_context(name);                                                       \
        const uint64_t args_[] = { 0, __VA_ARGS__ };                                         \
        int state_ = cricket_enter();                                                        \
        if (state_ != 0)                                                                     \
            return cricket_after_client(name, args_ + 1, state_);                            \
        return (cudaError_t)cricket_api.call(name, args_ + 1,                                \
                                             (int)(sizeof args_ / sizeof args_[0]) - 1);     \
    } while (0)
#define FORWARD(...) CALL_AS(__func__, __VA_ARGS__)
#define FORWARD0() CALL_AS(__func__)

#endif
