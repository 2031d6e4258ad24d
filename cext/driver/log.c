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

static int threshold(void)
{
    static atomic_int cached = -1;
    int value = atomic_load_explicit(&cached, memory_order_relaxed);
    if (value < 0) {
        const char *level = getenv("CRICKET_LOG");
        value = CRICKET_DRV_WARNING;
        if (level) {
            if (!strcasecmp(level, "DEBUG")) value = CRICKET_DRV_DEBUG;
            else if (!strcasecmp(level, "INFO")) value = CRICKET_DRV_INFO;
            else if (!strcasecmp(level, "ERROR")) value = CRICKET_DRV_ERROR;
            else if (!strcasecmp(level, "CRITICAL")) value = CRICKET_DRV_ERROR + 10;
        }
        atomic_store_explicit(&cached, value, memory_order_relaxed);
    }
    return value;
}

int cricket_drv_log_enabled(int level)
{
    return level >= threshold();
}

void cricket_drv_log(int level, const char *fmt, ...)
{
    if (level < threshold())
        return;
    const char *name = level >= CRICKET_DRV_ERROR ? "ERROR" : level >= CRICKET_DRV_WARNING ? "WARNING"
                     : level >= CRICKET_DRV_INFO ? "INFO" : "DEBUG";
    char line[1024];
    int n = snprintf(line, sizeof line, "[cricket] %s libcuda shim: ", name);
    va_list ap;
    va_start(ap, fmt);
    n += vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof line - 2)
        n = (int)sizeof line - 2;
    line[n++] = '\n';
    ssize_t ignored = write(STDERR_FILENO, line, (size_t)n);   /* one write: no interleaving */
    (void)ignored;
}

CUresult cricket_drv_unimplemented(const char *name, atomic_int *seen)
{
    if (atomic_exchange_explicit(seen, 1, memory_order_relaxed) == 0)
        cricket_drv_log(CRICKET_DRV_WARNING, "%s is not implemented by cricket; it returns CUDA_ERROR_NOT_SUPPORTED", name);
    return CUDA_ERROR_NOT_SUPPORTED;
}
