/* The libcudart.so.13 shim's logging and its description for the shared lifecycle
 * (cext/common/bootstrap.c: finding or starting Python, importing the client, threads, fork, exit). */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shim.h"
#include "log.h"

struct cricket_client_api cricket_api;

/* ------------------------------------------------------------------ logging */

void cricket_log(int level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cricket_vlog(level, "libcudart shim", fmt, ap);
    va_end(ap);
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
