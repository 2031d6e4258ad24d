/* Logging of the libcuda.so.1 replacement: one line per message on stderr, level from CRICKET_LOG
 * (the same variable and format as the libcudart shim). Never allocates, usable before main and
 * after Python finalised. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "driver.h"
#include "log.h"

int cricket_drv_log_enabled(int level)
{
    return level >= cricket_log_threshold();
}

void cricket_drv_log(int level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cricket_vlog(level, "libcuda shim", fmt, ap);
    va_end(ap);
}

CUresult cricket_drv_unimplemented(const char *name, atomic_int *seen)
{
    if (atomic_exchange_explicit(seen, 1, memory_order_relaxed) == 0)
        cricket_drv_log(CRICKET_DRV_WARNING, "%s is not implemented by cricket; it returns CUDA_ERROR_NOT_SUPPORTED", name);
    return CUDA_ERROR_NOT_SUPPORTED;
}
