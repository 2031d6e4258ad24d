/* Contexts answered in the process: primary contexts with their reference counts, contexts made by
 * cuCtxCreate, the per-thread current-context stack, and context-local storage (the CLS export
 * table's map).
 *
 * A primary context handle stays valid for the whole process, as with the real driver; its retain
 * count says whether it is active. A created context is a struct of its own that is never freed:
 * after cuCtxDestroy the handle is known as destroyed (CUDA_ERROR_INVALID_CONTEXT when passed,
 * CUDA_ERROR_CONTEXT_IS_DESTROYED where it is still current). The server has one session per
 * process; the client files what is made while a created context is current under its id and
 * frees it when the context is destroyed (forward.c tells it the current context's id). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "stream_priorities.h"   /* generated from cricket/backends/reference_device.py */

#include <cudaProfiler.h>   /* after driver.h, which sets __CUDA_API_VERSION_INTERNAL for cuda.h */

static struct CUctx_st primary[CRICKET_DRV_MAX_DEVICES];
static pthread_mutex_t ctx_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t cls_lock = PTHREAD_RWLOCK_INITIALIZER;   /* guards the CLS map (below) */

#define CTX_STACK_DEPTH 64
static __thread CUcontext ctx_stack[CTX_STACK_DEPTH];
static __thread int ctx_depth;     /* number of entries; the top is the current context */

/* Contexts made by cuCtxCreate, destroyed ones included (guarded by ctx_lock). */
static struct CUctx_st **created;
static size_t created_count, created_capacity;
static uint64_t last_context_id;

static int is_primary(CUcontext ctx)
{
    return ctx >= &primary[0] && ctx < &primary[CRICKET_DRV_MAX_DEVICES] && ctx->magic == CRICKET_DRV_CTX_MAGIC;
}

/* A handle cuCtxCreate returned (destroyed or not); never dereferences an unknown pointer. */
static int is_created(CUcontext ctx)
{
    int found = 0;
    pthread_mutex_lock(&ctx_lock);
    for (size_t i = 0; i < created_count && !found; i++)
        found = created[i] == ctx;
    pthread_mutex_unlock(&ctx_lock);
    return found;
}

CUcontext cricket_drv_created_context(uint64_t id)
{
    CUcontext found = NULL;
    pthread_mutex_lock(&ctx_lock);
    for (size_t i = 0; i < created_count && !found; i++)
        if (created[i]->id == id && !atomic_load(&created[i]->destroyed))
            found = created[i];
    pthread_mutex_unlock(&ctx_lock);
    return found;
}

int cricket_drv_context_valid(CUcontext ctx)
{
    return ctx && (is_primary(ctx) || (is_created(ctx) && !atomic_load(&ctx->destroyed)));
}

CUcontext cricket_drv_primary_context(CUdevice dev)
{
    return dev >= 0 && dev < cricket_drv_snapshot()->device_count ? &primary[dev] : NULL;
}

CUcontext cricket_drv_current_context(void)
{
    return ctx_depth ? ctx_stack[ctx_depth - 1] : NULL;
}

CUcontext cricket_drv_resolve_context(CUcontext ctx)
{
    return ctx == NULL || ctx == (CUcontext)(intptr_t)-1 ? cricket_drv_current_context() : ctx;
}

static CUresult check_device(CUdevice dev)
{
    CUresult rc = cricket_drv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    return dev >= 0 && dev < cricket_drv_snapshot()->device_count ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

#define SUPPORTED_CTX_FLAGS (CU_CTX_SCHED_MASK | CU_CTX_MAP_HOST | CU_CTX_LMEM_RESIZE_TO_MAX \
                             | CU_CTX_COREDUMP_ENABLE | CU_CTX_USER_COREDUMP_ENABLE | CU_CTX_SYNC_MEMOPS)

/* The flags cuCtxCreate and cuDevicePrimaryCtxSetFlags take: the known bits, at most one
 * CU_CTX_SCHED_* (the documented rule: "only one of the scheduling flags can be set"). */
static int context_flags_valid(unsigned int flags)
{
    unsigned int sched = flags & CU_CTX_SCHED_MASK;
    return !(flags & ~(unsigned)SUPPORTED_CTX_FLAGS) && !(sched & (sched - 1));
}

/* A fork while another thread holds a lock would leave it held forever in the child. */
static void fork_prepare(void)
{
    pthread_mutex_lock(&ctx_lock);
    pthread_rwlock_wrlock(&cls_lock);
}

static void fork_parent(void)
{
    pthread_rwlock_unlock(&cls_lock);
    pthread_mutex_unlock(&ctx_lock);
}

/* The child re-creates the locks instead of unlocking them: glibc's rwlock remembers its writer
 * by thread id, and the child's only thread has a new one, so an unlock there would be taken for
 * a reader's and leave the lock held (the next cls_get blocked forever). */
static void fork_child(void)
{
    pthread_rwlock_init(&cls_lock, NULL);
    pthread_mutex_init(&ctx_lock, NULL);
}

__attribute__((constructor)) static void install_fork_handlers(void)
{
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* ------------------------------------------------------------------ primary contexts */

CRICKET_DRV_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = check_device(dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    pthread_mutex_lock(&ctx_lock);
    struct CUctx_st *ctx = &primary[dev];
    ctx->magic = CRICKET_DRV_CTX_MAGIC;
    ctx->device = dev;
    int count = ++ctx->retain_count;
    pthread_mutex_unlock(&ctx_lock);
    *pctx = ctx;
    cricket_drv_log(CRICKET_DRV_DEBUG, "primary context of device %d retained (count %d)", dev, count);
    return CUDA_SUCCESS;
}

CRICKET_DRV_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    CUresult rc = check_device(dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    pthread_mutex_lock(&ctx_lock);
    int count = primary[dev].retain_count;
    if (count > 0)
        primary[dev].retain_count = --count;
    else
        rc = CUDA_ERROR_INVALID_CONTEXT;
    if (count == 0)     /* the real driver destroys the context here: a later retain starts afresh */
        atomic_store(&primary[dev].cache_config, CU_FUNC_CACHE_PREFER_NONE);
    pthread_mutex_unlock(&ctx_lock);
    cricket_drv_log(CRICKET_DRV_DEBUG, "primary context of device %d released (count %d)", dev, count);
    return rc;
}

CRICKET_DRV_EXPORT CUresult cuDevicePrimaryCtxRelease(CUdevice dev)
{
    return cuDevicePrimaryCtxRelease_v2(dev);
}

CRICKET_DRV_EXPORT CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
    if (!flags || !active)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = check_device(dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    pthread_mutex_lock(&ctx_lock);
    *flags = primary[dev].flags;
    *active = primary[dev].retain_count > 0;
    pthread_mutex_unlock(&ctx_lock);
    return CUDA_SUCCESS;
}

CRICKET_DRV_EXPORT CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags)
{
    CUresult rc = check_device(dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!context_flags_valid(flags))
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&ctx_lock);
    primary[dev].flags = flags;
    pthread_mutex_unlock(&ctx_lock);
    /* The schedule says how the process waits for the server, as for the GPU (the client core's
     * cricket.client.runtime.apply_schedule). */
    uint64_t schedule = flags & CU_CTX_SCHED_MASK;
    return cricket_drv_client_call("cricketSetSchedule", &schedule, 1);
}

CRICKET_DRV_EXPORT CUresult cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags)
{
    return cuDevicePrimaryCtxSetFlags_v2(dev, flags);
}

/* ------------------------------------------------------------------ current context */

CRICKET_DRV_EXPORT CUresult cuCtxGetCurrent(CUcontext *pctx)
{
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = cricket_drv_check_init();
    if (rc == CUDA_SUCCESS)
        *pctx = cricket_drv_current_context();
    return rc;
}

CRICKET_DRV_EXPORT CUresult cuCtxSetCurrent(CUcontext ctx)
{
    CUresult rc = cricket_drv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (ctx && !cricket_drv_context_valid(ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    if (!ctx) {                       /* unbinds: the stack's top is removed */
        if (ctx_depth)
            ctx_depth--;
        return CUDA_SUCCESS;
    }
    if (ctx_depth == 0)
        ctx_depth = 1;
    ctx_stack[ctx_depth - 1] = ctx;
    return CUDA_SUCCESS;
}

CRICKET_DRV_EXPORT CUresult cuCtxPushCurrent_v2(CUcontext ctx)
{
    CUresult rc = cricket_drv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!cricket_drv_context_valid(ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    if (ctx_depth == CTX_STACK_DEPTH)
        return CUDA_ERROR_OUT_OF_MEMORY;
    ctx_stack[ctx_depth++] = ctx;
    return CUDA_SUCCESS;
}

CRICKET_DRV_EXPORT CUresult cuCtxPopCurrent_v2(CUcontext *pctx)
{
    CUresult rc = cricket_drv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (ctx_depth == 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    CUcontext ctx = ctx_stack[--ctx_depth];
    if (pctx)
        *pctx = ctx;
    return CUDA_SUCCESS;
}

CRICKET_DRV_EXPORT CUresult cuCtxPushCurrent(CUcontext ctx)
{
    return cuCtxPushCurrent_v2(ctx);
}

CRICKET_DRV_EXPORT CUresult cuCtxPopCurrent(CUcontext *pctx)
{
    return cuCtxPopCurrent_v2(pctx);
}

/* The context to act on: `ctx` when given, else the current one; CUDA_ERROR_INVALID_CONTEXT when
 * there is none or `ctx` is not a live context, CUDA_ERROR_CONTEXT_IS_DESTROYED when the current
 * one was destroyed (by this thread's cuCtxDestroy it would have been popped: another thread's). */
static CUresult context_or_current(CUcontext ctx, CUcontext *out)
{
    CUresult rc = cricket_drv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!ctx) {
        ctx = cricket_drv_current_context();
        if (ctx && atomic_load(&ctx->destroyed))
            return CUDA_ERROR_CONTEXT_IS_DESTROYED;
    }
    if (!cricket_drv_context_valid(ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    *out = ctx;
    return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------ created contexts */

CRICKET_DRV_EXPORT CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *params, unsigned int flags, CUdevice dev)
{
    CUresult rc = check_device(dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!pctx || !context_flags_valid(flags))
        return CUDA_ERROR_INVALID_VALUE;
    if (params) {
        if (params->numExecAffinityParams < 0 || (params->numExecAffinityParams > 0 && !params->execAffinityParams)
            || (params->execAffinityParams && params->cigParams))
            return CUDA_ERROR_INVALID_VALUE;
        if (params->cigParams) {
            /* cuda.h: "Context creation in CIG mode will fail with CUDA_ERROR_NOT_SUPPORTED if CIG is
             * not supported by the device or the driver" */
            cricket_drv_log(CRICKET_DRV_WARNING, "cuCtxCreate: CUDA-in-graphics (CIG) contexts are not supported");
            return CUDA_ERROR_NOT_SUPPORTED;
        }
        if (params->numExecAffinityParams > 0) {
            /* execution affinity (an SM count) exists under MPS only; cricket has no MPS */
            cricket_drv_log(CRICKET_DRV_WARNING, "cuCtxCreate: execution affinity is not supported");
            return CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY;
        }
    }
    if (cricket_drv_snapshot()->devices[dev].attributes[CU_DEVICE_ATTRIBUTE_COMPUTE_MODE] == CU_COMPUTEMODE_PROHIBITED)
        return CUDA_ERROR_UNKNOWN;      /* documented for a compute-prohibited device */
    if (ctx_depth == CTX_STACK_DEPTH)
        return CUDA_ERROR_OUT_OF_MEMORY;
    struct CUctx_st *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return CUDA_ERROR_OUT_OF_MEMORY;
    ctx->magic = CRICKET_DRV_CTX_MAGIC;
    ctx->device = dev;
    ctx->flags = flags;
    ctx->retain_count = 1;
    pthread_mutex_lock(&ctx_lock);
    if (created_count == created_capacity) {
        size_t capacity = created_capacity ? 2 * created_capacity : 16;
        struct CUctx_st **grown = realloc(created, capacity * sizeof *grown);
        if (!grown) {
            pthread_mutex_unlock(&ctx_lock);
            free(ctx);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        created = grown;
        created_capacity = capacity;
    }
    ctx->id = ++last_context_id;
    created[created_count++] = ctx;
    pthread_mutex_unlock(&ctx_lock);
    ctx_stack[ctx_depth++] = ctx;        /* pushed: it supplants the current one until popped */
    *pctx = ctx;
    cricket_drv_log(CRICKET_DRV_DEBUG, "context %llu created on device %d (flags %#x)",
                    (unsigned long long)ctx->id, dev, flags);
    return CUDA_SUCCESS;
}

CRICKET_DRV_EXPORT CUresult cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray, int numParams,
                                           unsigned int flags, CUdevice dev)
{
    CUctxCreateParams params = { paramsArray, numParams, NULL };
    return cuCtxCreate_v4(pctx, &params, flags, dev);
}

CRICKET_DRV_EXPORT CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    return cuCtxCreate_v4(pctx, NULL, flags, dev);
}

CRICKET_DRV_EXPORT CUresult cuCtxCreate(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    return cuCtxCreate_v4(pctx, NULL, flags, dev);
}

static void cls_forget(CUcontext ctx);

/* Destroys `ctx` wherever it is current (other threads then get CUDA_ERROR_CONTEXT_IS_DESTROYED)
 * and pops it from the calling thread's stack; the client frees what was made in it. */
CRICKET_DRV_EXPORT CUresult cuCtxDestroy_v2(CUcontext ctx)
{
    CUresult rc = cricket_drv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!ctx)
        return CUDA_ERROR_INVALID_VALUE;
    if (!is_created(ctx) || atomic_exchange(&ctx->destroyed, 1))
        return CUDA_ERROR_INVALID_CONTEXT;     /* not made by cuCtxCreate (a primary one), or destroyed */
    if (atomic_load(&ctx->told)) {
        uint64_t id = ctx->id;
        rc = cricket_drv_client_call("cricketContextDestroy", &id, 1);
        if (rc == CUDA_ERROR_DEINITIALIZED)
            rc = CUDA_SUCCESS;                  /* the client shut down: the server freed the session */
    }
    int kept = 0;
    for (int i = 0; i < ctx_depth; i++)
        if (ctx_stack[i] != ctx)
            ctx_stack[kept++] = ctx_stack[i];
    ctx_depth = kept;
    cls_forget(ctx);
    cricket_drv_log(CRICKET_DRV_DEBUG, "context %llu destroyed", (unsigned long long)ctx->id);
    return rc;
}

CRICKET_DRV_EXPORT CUresult cuCtxDestroy(CUcontext ctx)
{
    return cuCtxDestroy_v2(ctx);
}

CRICKET_DRV_EXPORT CUresult cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx)
{
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = context_or_current(ctx, &ctx);
    if (rc == CUDA_SUCCESS)
        *device = ctx->device;
    return rc;
}

CRICKET_DRV_EXPORT CUresult cuCtxGetDevice(CUdevice *device)
{
    return cuCtxGetDevice_v2(device, NULL);
}

CRICKET_DRV_EXPORT CUresult cuCtxGetFlags(unsigned int *flags)
{
    CUcontext ctx;
    if (!flags)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = context_or_current(NULL, &ctx);
    if (rc == CUDA_SUCCESS)
        *flags = ctx->flags;
    return rc;
}

CRICKET_DRV_EXPORT CUresult cuCtxGetApiVersion(CUcontext ctx, unsigned int *version)
{
    if (!version)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = context_or_current(ctx, &ctx);
    if (rc == CUDA_SUCCESS)
        *version = 3020;     /* what the real driver reports for every context since CUDA 3.2 */
    return rc;
}

CRICKET_DRV_EXPORT CUresult cuCtxGetStreamPriorityRange(int *leastPriority, int *greatestPriority)
{
    CUcontext ctx;
    CUresult rc = context_or_current(NULL, &ctx);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (leastPriority)
        *leastPriority = STREAM_PRIORITY_LEAST;
    if (greatestPriority)
        *greatestPriority = STREAM_PRIORITY_GREATEST;
    return CUDA_SUCCESS;
}

/* Cache and shared-memory-bank preferences are hints (no effect on results). The cache preference
 * is kept per context for cuCtxGetCacheConfig; the emulated sm_75, like every GPU since Maxwell,
 * has fixed 4-byte banks, which cuCtxGetSharedMemConfig reports whatever was set (as documented for
 * devices without configurable banks). */
CRICKET_DRV_EXPORT CUresult cuCtxSetCacheConfig(CUfunc_cache config)
{
    CUcontext ctx;
    CUresult rc = context_or_current(NULL, &ctx);
    if (rc != CUDA_SUCCESS)
        return rc;
    if ((unsigned)config > CU_FUNC_CACHE_PREFER_EQUAL)
        return CUDA_ERROR_INVALID_VALUE;
    atomic_store(&ctx->cache_config, (int)config);
    return CUDA_SUCCESS;
}

CRICKET_DRV_EXPORT CUresult cuCtxGetCacheConfig(CUfunc_cache *pconfig)
{
    CUcontext ctx;
    if (!pconfig)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = context_or_current(NULL, &ctx);
    if (rc == CUDA_SUCCESS)
        *pconfig = (CUfunc_cache)atomic_load(&ctx->cache_config);
    return rc;
}

CRICKET_DRV_EXPORT CUresult cuCtxSetSharedMemConfig(CUsharedconfig config)
{
    CUcontext ctx;
    CUresult rc = context_or_current(NULL, &ctx);
    if (rc != CUDA_SUCCESS)
        return rc;
    return (unsigned)config > CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

CRICKET_DRV_EXPORT CUresult cuCtxGetSharedMemConfig(CUsharedconfig *pConfig)
{
    CUcontext ctx;
    if (!pConfig)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = context_or_current(NULL, &ctx);
    if (rc == CUDA_SUCCESS)
        *pConfig = CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE;
    return rc;
}

/* No profiler is attached to a remote device: start and stop succeed in a context and do nothing. */
CRICKET_DRV_EXPORT CUresult cuProfilerStart(void)
{
    CUcontext ctx;
    return context_or_current(NULL, &ctx);
}

CRICKET_DRV_EXPORT CUresult cuProfilerStop(void)
{
    CUcontext ctx;
    return context_or_current(NULL, &ctx);
}

/* ------------------------------------------------------------------ context-local storage */

struct cls_entry {
    CUcontext ctx;
    void *key;
    void *value;
    void *destructor;    /* stored, never called: its signature is not known (cudart keeps CLS on
                            primary contexts, which are never destroyed) */
};

static struct cls_entry *cls_entries;
static size_t cls_count, cls_capacity;

static struct cls_entry *cls_find(CUcontext ctx, void *key)
{
    for (size_t i = 0; i < cls_count; i++)
        if (cls_entries[i].ctx == ctx && cls_entries[i].key == key)
            return &cls_entries[i];
    return NULL;
}

CUresult cricket_drv_cls_put(CUcontext ctx, void *key, void *value, void *destructor)
{
    ctx = cricket_drv_resolve_context(ctx);
    if (!ctx)
        return CUDA_ERROR_INVALID_CONTEXT;
    CUresult rc = CUDA_SUCCESS;
    pthread_rwlock_wrlock(&cls_lock);
    struct cls_entry *e = cls_find(ctx, key);
    if (!e) {
        if (cls_count == cls_capacity) {
            size_t capacity = cls_capacity ? 2 * cls_capacity : 16;
            struct cls_entry *grown = realloc(cls_entries, capacity * sizeof *grown);
            if (!grown)
                rc = CUDA_ERROR_OUT_OF_MEMORY;
            else {
                cls_entries = grown;
                cls_capacity = capacity;
            }
        }
        if (rc == CUDA_SUCCESS)
            e = &cls_entries[cls_count++];
    }
    if (e)
        *e = (struct cls_entry){ ctx, key, value, destructor };
    pthread_rwlock_unlock(&cls_lock);
    cricket_drv_log(CRICKET_DRV_DEBUG, "context-local storage put (context %p, key %p)", (void *)ctx, key);
    return rc;
}

CUresult cricket_drv_cls_delete(CUcontext ctx, void *key)
{
    ctx = cricket_drv_resolve_context(ctx);
    CUresult rc = CUDA_ERROR_INVALID_HANDLE;
    pthread_rwlock_wrlock(&cls_lock);
    struct cls_entry *e = cls_find(ctx, key);
    if (e) {
        *e = cls_entries[--cls_count];
        rc = CUDA_SUCCESS;
    }
    pthread_rwlock_unlock(&cls_lock);
    return rc;
}

CUresult cricket_drv_cls_get(void **value, CUcontext ctx, void *key)
{
    if (!value)
        return CUDA_ERROR_INVALID_VALUE;
    ctx = cricket_drv_resolve_context(ctx);
    CUresult rc = CUDA_ERROR_INVALID_HANDLE;
    pthread_rwlock_rdlock(&cls_lock);
    struct cls_entry *e = cls_find(ctx, key);
    if (e) {
        *value = e->value;
        rc = CUDA_SUCCESS;
    }
    pthread_rwlock_unlock(&cls_lock);
    return rc;
}

/* A destroyed context's entries go with it. */
static void cls_forget(CUcontext ctx)
{
    pthread_rwlock_wrlock(&cls_lock);
    for (size_t i = 0; i < cls_count; )
        if (cls_entries[i].ctx == ctx)
            cls_entries[i] = cls_entries[--cls_count];
        else
            i++;
    pthread_rwlock_unlock(&cls_lock);
}
