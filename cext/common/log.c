/* See log.h. */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <unistd.h>

#include "log.h"

int cricket_log_threshold(void)
{
    static atomic_int cached = -1;
    int value = atomic_load_explicit(&cached, memory_order_relaxed);
    if (value < 0) {
        const char *level = getenv("CRICKET_LOG");
        value = CRICKET_LOG_WARNING;
        if (level) {
            if (!strcasecmp(level, "DEBUG")) value = CRICKET_LOG_DEBUG;
            else if (!strcasecmp(level, "INFO")) value = CRICKET_LOG_INFO;
            else if (!strcasecmp(level, "ERROR")) value = CRICKET_LOG_ERROR;
            else if (!strcasecmp(level, "CRITICAL")) value = CRICKET_LOG_ERROR + 10;
        }
        atomic_store_explicit(&cached, value, memory_order_relaxed);
    }
    return value;
}

void cricket_vlog(int level, const char *who, const char *fmt, va_list ap)
{
    if (level < cricket_log_threshold())
        return;
    const char *name = level >= CRICKET_LOG_ERROR ? "ERROR" : level >= CRICKET_LOG_WARNING ? "WARNING"
                     : level >= CRICKET_LOG_INFO ? "INFO" : "DEBUG";
    char line[1024];
    int n = snprintf(line, sizeof line, "[cricket] %s %s: ", name, who);
    n += vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    if (n > (int)sizeof line - 2)
        n = (int)sizeof line - 2;
    line[n++] = '\n';
    ssize_t ignored = write(STDERR_FILENO, line, (size_t)n);   /* one write: no interleaving */
    (void)ignored;
}
