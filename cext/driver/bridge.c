/* The bridge to the cricket client (Python): the one way the C files of this library reach it.
 * `cricket_drv_client_call` calls the `cdef api` entry of cricket._cext.cuda_api
 * (`cext/cuda_api.pyx`), which looks the documented name up in cricket.client.driver_api; the client
 * is started by cext/common/bootstrap.c at the first call. devices.c (the HELLO snapshot),
 * contexts.c (context destruction) and forward.c (the forwarded entry points) call it; it calls
 * nothing of theirs, so the C files form no cycle. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include "bootstrap.h"
#include "driver.h"

static int (*client_attach)(void (*mark_dead)(void), int embedded);
static int (*client_call)(const char *name, const uint64_t *args, int nargs);

static void bootstrap_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bootstrap_log(int level, const char *fmt, ...)
{
    if (!cricket_drv_log_enabled(level))
        return;
    char text[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    cricket_drv_log(level, "%s", text);
}

static const struct cricket_bootstrap_capi CAPI[] = {
    { "cricket_drv_attach", "int (void (*)(void), int)", (void **)&client_attach },
    { "cricket_drv_call", "int (char const *, uint64_t const *, int)", (void **)&client_call },
};

static const struct cricket_bootstrap_config CONFIG = {
    .module = "cricket._cext.cuda_api",
    .capi = CAPI,
    .capi_count = sizeof CAPI / sizeof CAPI[0],
    .attach = &client_attach,
    .log = bootstrap_log,
};

CUresult cricket_drv_client_call(const char *name, const uint64_t *args, int nargs)
{
    int state = cricket_bootstrap_enter(&CONFIG);
    if (CRICKET_UNLIKELY(state != 0))
        return state == CRICKET_BS_DEAD ? CUDA_ERROR_DEINITIALIZED : CUDA_ERROR_NOT_INITIALIZED;
    return (CUresult)client_call(name, args, nargs);
}
