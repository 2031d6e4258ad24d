/* The libcudart.so.13 shim's logging and its description for the shared lifecycle
 * (cext/common/bootstrap.c: finding or starting Python, importing the client, threads, fork, exit). */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shim.h"

struct cricket_client_api cricket_api;

/* ------------------------------------------------------------------ logging */

static int log_threshold(void)
{
    static int threshold = -1;
    if (threshold < 0) {
        const char *level = getenv("CRICKET_LOG");
        threshold = CRICKET_WARNING;
        if (level) {
            if (!strcasecmp(level, "DEBUG")) threshold = CRICKET_DEBUG;
            else if (!strcasecmp(level, "INFO")) threshold = CRICKET_INFO;
            else if (!strcasecmp(level, "ERROR")) threshold = CRICKET_ERROR;
            else if (!strcasecmp(level, "CRITICAL")) threshold = CRICKET_ERROR + 10;
        }
    }
    return threshold;
}

void cricket_log(int level, const char *fmt, ...)
{
    if (level < log_threshold())
        return;
    const char *name = level >= CRICKET_ERROR ? "ERROR" : level >= CRICKET_WARNING ? "WARNING"
                     : level >= CRICKET_INFO ? "INFO" : "DEBUG";
    char line[1024];
    int n = snprintf(line, sizeof line, "[cricket] %s libcudart shim: ", name);
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

void cricket_unimplemented(const char *name, cricket_once_flag *seen)
{
    if (atomic_exchange_explicit(seen, 1, memory_order_relaxed) == 0)
        cricket_log(CRICKET_WARNING, "%s is not implemented by cricket; it returns cudaErrorNotSupported", name);
}

cudaError_t cricket_unavailable_error(int state)
{
    return state == CRICKET_DEAD ? cudaErrorCudartUnloading : cudaErrorInitializationError;
}

/* ------------------------------------------------------------------ the client module */

/* The capsule names are Cython's rendering of each C signature: checking them catches a module
 * built from a .pyx that no longer matches this shim. */
#define API(field, name, signature) { name, signature, (void **)&cricket_api.field }
static const struct cricket_bootstrap_capi CAPI[] = {
    API(attach, "cricket_attach", "int (void (*)(void), int)"),
    API(get_error_string, "cricket_cudaGetErrorString", "char const *(int)"),
    API(get_error_name, "cricket_cudaGetErrorName", "char const *(int)"),
    API(runtime_get_version, "cricket_cudaRuntimeGetVersion", "int (int *)"),
    API(register_fat_binary, "cricket___cudaRegisterFatBinary", "void **(void *)"),
    API(register_fat_binary_end, "cricket___cudaRegisterFatBinaryEnd", "void (void **)"),
    API(unregister_fat_binary, "cricket___cudaUnregisterFatBinary", "void (void **)"),
    API(register_function, "cricket___cudaRegisterFunction",
        "void (void **, char const *, char *, char const *, int, void *, void *, void *, void *, int *)"),
    API(register_var, "cricket___cudaRegisterVar",
        "void (void **, char *, char *, char const *, int, size_t, int, int)"),
    API(register_managed_var, "cricket___cudaRegisterManagedVar",
        "void (void **, void **, char *, char const *, int, size_t, int, int)"),
    API(init_module, "cricket___cudaInitModule", "char (void **)"),
    API(call, "cricket_call", "int (char const *, uint64_t const *, int)"),
};
#undef API

const struct cricket_bootstrap_config cricket_shim_config = {
    .module = CRICKET_CLIENT_MODULE,
    .capi = CAPI,
    .capi_count = sizeof CAPI / sizeof CAPI[0],
    .attach = &cricket_api.attach,
    .log = cricket_log,
};
