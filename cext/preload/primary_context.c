/* The runtime's primary contexts, kept as the CUDA Runtime API documents it ("Interactions with the
 * CUDA Driver API"): a runtime call that needs a context, made on a thread with no current context,
 * retains the primary context of the thread's device and makes it current (so a library that asks
 * the driver, cuCtxGetCurrent, finds it: cuBLAS under PyTorch does); cudaSetDevice makes the
 * device's primary context current; cudaInitDevice initialises it without making it current; and
 * cudaDeviceReset deinitialises the current device's (the runtime releases its reference), leaving
 * it current wherever it was, so that the next call that needs a context, on any thread,
 * initialises it again. A context made current through the driver API (cuCtxCreate, cuCtxSetCurrent)
 * is left as it is: the runtime works in it.
 *
 * The driver is the process's libcuda.so.1 (driver_link.c): cricket's, under `cricket run`. When it
 * is missing, or lacks the context functions, nothing here does anything. */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <cuda.h>
#include "shim.h"

typedef CUresult (*ctx_get_fn)(CUcontext *);
typedef CUresult (*ctx_set_fn)(CUcontext);
typedef CUresult (*ctx_device_fn)(CUdevice *);
typedef CUresult (*retain_fn)(CUcontext *, CUdevice);
typedef CUresult (*release_fn)(CUdevice);

static struct {
    ctx_get_fn get_current;
    ctx_set_fn set_current;
    ctx_device_fn get_device;
    retain_fn retain;
    release_fn release;
} drv;
static pthread_once_t drv_once = PTHREAD_ONCE_INIT;

#define MAX_DEVICES 64
static pthread_mutex_t retain_lock = PTHREAD_MUTEX_INITIALIZER;
static int held[MAX_DEVICES];              /* the runtime holds a reference to the primary context */
static CUcontext handle[MAX_DEVICES];      /* the primary context's handle, once retained */
static int refused[MAX_DEVICES];           /* the driver refused to retain it (logged once) */

/* Bumped by cudaDeviceReset: every thread checks its context again at its next call. */
static atomic_uint epoch = 1;
static __thread unsigned thread_epoch;

/* Runtime calls that do not need a context: device queries, errors, versions, and the calls that
 * settle the context themselves (cudaSetDevice, cudaInitDevice, cudaDeviceReset). Torch relies on
 * the queries leaving the primary context inactive (cuDevicePrimaryCtxGetState). */
static const char *const CONTEXT_FREE[] = {
    "cudaGetDeviceCount", "cudaGetDevice", "cudaSetDevice", "cudaInitDevice", "cudaDeviceReset",
    "cudaDeviceGetAttribute", "cricket_device_identity", "cricket_device_attributes",
    "cudaGetLastError", "cudaPeekAtLastError", "cudaDriverGetVersion", "cudaSetDeviceFlags",
    "cudaGetDeviceFlags", "cudaChooseDevice", "cudaDeviceGetPCIBusId", "cudaDeviceGetByPCIBusId",
    "cudaDeviceCanAccessPeer", "cudaDeviceGetP2PAttribute",
};

static int needs_context(const char *name)
{
    for (size_t i = 0; i < sizeof CONTEXT_FREE / sizeof CONTEXT_FREE[0]; i++)
        if (strcmp(name, CONTEXT_FREE[i]) == 0)
            return 0;
    return 1;
}

static void load_driver(void)
{
    ctx_get_fn get_current = (ctx_get_fn)cricket_driver_symbol("cuCtxGetCurrent");
    ctx_set_fn set_current = (ctx_set_fn)cricket_driver_symbol("cuCtxSetCurrent");
    ctx_device_fn get_device = (ctx_device_fn)cricket_driver_symbol("cuCtxGetDevice");
    retain_fn retain = (retain_fn)cricket_driver_symbol("cuDevicePrimaryCtxRetain");
    release_fn release = (release_fn)cricket_driver_symbol("cuDevicePrimaryCtxRelease_v2");
    if (!get_current || !set_current || !get_device || !retain || !release) {
        cricket_log(CRICKET_DEBUG, "no driver context functions: primary contexts are not made current");
        return;
    }
    drv.set_current = set_current;
    drv.get_device = get_device;
    drv.retain = retain;
    drv.release = release;
    drv.get_current = get_current;          /* last: it says the others are there */
}

static int driver_ready(void)
{
    pthread_once(&drv_once, load_driver);
    return drv.get_current != NULL;
}

/* The primary context of `device` with the runtime's reference on it (taken once per
 * initialisation); NULL when the driver refuses it. */
static CUcontext runtime_primary(int device)
{
    if (device < 0 || device >= MAX_DEVICES)
        return NULL;
    CUcontext ctx = NULL;
    pthread_mutex_lock(&retain_lock);
    if (!held[device]) {
        CUresult rc = drv.retain(&handle[device], device);
        held[device] = rc == CUDA_SUCCESS;
        if (held[device])
            cricket_log(CRICKET_DEBUG, "primary context of device %d initialised by the runtime", device);
        else if (!refused[device]) {
            refused[device] = 1;
            cricket_log(CRICKET_WARNING, "the driver refused the primary context of device %d (CUresult %d): "
                        "runtime calls on it run with no current context", device, (int)rc);
        }
    }
    if (held[device])
        ctx = handle[device];
    pthread_mutex_unlock(&retain_lock);
    return ctx;
}

/* The device of the current context `ctx` and whether it is that device's primary context. A
 * primary context the runtime never retained (a driver-API program made it current) is retained
 * once to learn its handle; the reference is kept when it is the current one, as the runtime
 * initialises the context it works in. */
static int context_device(CUcontext ctx, int *is_primary)
{
    CUdevice device = -1;
    if (drv.get_device(&device) != CUDA_SUCCESS || device < 0 || device >= MAX_DEVICES)
        return -1;
    pthread_mutex_lock(&retain_lock);
    if (!handle[device]) {
        CUcontext primary = NULL;
        if (drv.retain(&primary, device) == CUDA_SUCCESS) {
            handle[device] = primary;
            held[device] = primary == ctx;
            if (!held[device])
                drv.release(device);
        }
    }
    *is_primary = handle[device] == ctx;
    pthread_mutex_unlock(&retain_lock);
    return device;
}

void cricket_runtime_context(const char *name)
{
    cricket_driver_link();
    if (!driver_ready())
        return;
    unsigned now = atomic_load_explicit(&epoch, memory_order_acquire);
    CUcontext ctx = NULL;
    if (drv.get_current(&ctx) != CUDA_SUCCESS)
        return;                             /* the driver is not initialised: nothing to bind */
    if (CRICKET_LIKELY(ctx != NULL && thread_epoch == now))
        return;
    if (!needs_context(name))
        return;
    if (ctx == NULL) {
        CUcontext primary = runtime_primary(cricket_noted_device());
        if (primary && drv.set_current(primary) == CUDA_SUCCESS)
            cricket_log(CRICKET_DEBUG, "%s: primary context of device %d made current on this thread",
                        name, cricket_noted_device());
    } else {
        int is_primary = 0;
        int device = context_device(ctx, &is_primary);
        if (is_primary)
            runtime_primary(device);        /* reset since: initialised again */
    }
    thread_epoch = now;
}

void cricket_runtime_set_device(int device)
{
    if (!driver_ready())
        return;
    CUcontext primary = runtime_primary(device);
    if (primary && drv.set_current(primary) == CUDA_SUCCESS)
        thread_epoch = atomic_load_explicit(&epoch, memory_order_acquire);
}

void cricket_runtime_init_device(int device)
{
    if (driver_ready())
        runtime_primary(device);
}

void cricket_runtime_reset_device(void)
{
    if (!driver_ready())
        return;
    CUcontext ctx = NULL;
    int device = cricket_noted_device(), is_primary = 1;
    if (drv.get_current(&ctx) == CUDA_SUCCESS && ctx)
        device = context_device(ctx, &is_primary);
    if (device < 0 || !is_primary)
        return;                             /* a context of the driver API's: only runtime state goes */
    pthread_mutex_lock(&retain_lock);
    if (held[device]) {
        drv.release(device);
        held[device] = 0;
    }
    pthread_mutex_unlock(&retain_lock);
    atomic_fetch_add_explicit(&epoch, 1, memory_order_release);
    cricket_log(CRICKET_DEBUG, "primary context of device %d deinitialised by cudaDeviceReset", device);
}
