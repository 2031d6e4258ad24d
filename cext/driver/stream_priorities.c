/* Stream priorities, kept by the client (cricket/client/stream_priorities.py). */
#include <stdint.h>

#include "driver.h"

#define U(x) ((uint64_t)(uintptr_t)(x))

CRICKET_DRV_EXPORT CUresult cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags, int priority)
{
    return cricket_drv_forward("cuStreamCreate", (const uint64_t[]){ U(phStream), flags, (uint64_t)(int64_t)priority }, 3);
}

CRICKET_DRV_EXPORT_PAIR_BODY(cuStreamGetPriority, cuStreamGetPriority_ptsz, (CUstream hStream, int *priority),
    cricket_drv_forward("cuStreamGetPriority", (const uint64_t[]){ U(hStream), U(priority) }, 2))
