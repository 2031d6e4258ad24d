/* Internal interface of the cricket libcuda.so.1 replacement.
 *
 * Every source of the library is compiled with __CUDA_API_VERSION_INTERNAL, so cuda.h declares
 * each function under its real ABI symbol name (cuMemcpyHtoD is the 32-bit-size version,
 * cuMemcpyHtoD_v2 the current one, cuMemcpyHtoD_v2_ptds its per-thread-stream twin). */
#ifndef CRICKET_DRIVER_H
#define CRICKET_DRIVER_H

#ifndef __CUDA_API_VERSION_INTERNAL
#define __CUDA_API_VERSION_INTERNAL 1
#endif

#include <cuda.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define CRICKET_DRV_EXPORT __attribute__((visibility("default")))
#define CRICKET_LIKELY(x) __builtin_expect(!!(x), 1)
#define CRICKET_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* ------------------------------------------------------------------ logging (log.c) */

enum cricket_drv_log_level { CRICKET_DRV_DEBUG = 10, CRICKET_DRV_INFO = 20, CRICKET_DRV_WARNING = 30,
                             CRICKET_DRV_ERROR = 40 };
void cricket_drv_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int cricket_drv_log_enabled(int level);

/* Logs "NAME is not implemented" once per name and returns CUDA_ERROR_NOT_SUPPORTED. */
CUresult cricket_drv_unimplemented(const char *name, atomic_int *seen);

/* ------------------------------------------------------------------ devices (devices.c) */

#define CRICKET_DRV_MAX_DEVICES 16

/* One device as the client sees it: a snapshot taken once per process and never changed (the
 * integrity hash covers UUID and PCI ids, and cudart caches the attributes). */
struct cricket_drv_device {
    char name[256];
    CUuuid uuid;
    size_t total_mem;
    int attributes[CU_DEVICE_ATTRIBUTE_MAX];
};

struct cricket_drv_snapshot {
    int driver_version;
    int device_count;
    const char *source;     /* "built-in emulated sm_75", a file name, or "server" (HELLO) */
    int unavailable;        /* the server's snapshot could not be had: cuInit fails with
                               CUDA_ERROR_DEVICE_UNAVAILABLE, as the runtime shim's calls do */
    struct cricket_drv_device devices[CRICKET_DRV_MAX_DEVICES];
};

/* The snapshot, loaded at the first use (cuInit or earlier); never NULL, never changes after. */
const struct cricket_drv_snapshot *cricket_drv_snapshot(void);

/* CUDA_SUCCESS after cuInit(0) succeeded, else CUDA_ERROR_NOT_INITIALIZED. */
CUresult cricket_drv_check_init(void);

/* ------------------------------------------------------------------ contexts (contexts.c) */

/* A context handle points at one of these: a primary context (id 0, one per device, for the
 * whole process) or one made by cuCtxCreate (id 1, 2, ...; never freed, so that a destroyed
 * handle is recognised as such). */
struct CUctx_st {
    uint32_t magic;
    CUdevice device;
    unsigned int flags;
    int retain_count;   /* guarded by the context lock */
    uint64_t id;        /* 0: primary; else the tag the client files this context's resources under */
    atomic_int destroyed;
    atomic_int told;    /* the client has seen this context (it may hold resources in it) */
    atomic_int cache_config;   /* CUfunc_cache preference (cuCtxSetCacheConfig); a hint */
};
#define CRICKET_DRV_CTX_MAGIC 0x63637478u   /* "cctx" */

/* The calling thread's current context (NULL when none). */
CUcontext cricket_drv_current_context(void);
/* NULL and (CUcontext)-1 mean "the current context", as the export tables use them. */
CUcontext cricket_drv_resolve_context(CUcontext ctx);
/* A live context: a primary one, or a created one not destroyed yet. */
int cricket_drv_context_valid(CUcontext ctx);
/* The primary context of `dev` (NULL for a device that does not exist). */
CUcontext cricket_drv_primary_context(CUdevice dev);
/* The live context cuCtxCreate made with this id (NULL when there is none). */
CUcontext cricket_drv_created_context(uint64_t id);

/* ------------------------------------------------------------------ the client (bridge.c) */

/* Calls the Python implementation of `name` with `nargs` 64-bit words, starting the client at the
 * first call; CUDA_ERROR_NOT_INITIALIZED when it cannot start, CUDA_ERROR_DEINITIALIZED after exit. */
CUresult cricket_drv_client_call(const char *name, const uint64_t *args, int nargs);
/* The same after the context checks every forwarded call makes (the current device and context). */
CUresult cricket_drv_forward(const char *name, const uint64_t *args, int nargs);

/* A legacy symbol and its per-thread twin with one body (gen_driver.py drops both stubs). */
#define CRICKET_DRV_EXPORT_PAIR_BODY(abi, ptname, params, body) \
    CRICKET_DRV_EXPORT CUresult abi params { return body; } \
    CRICKET_DRV_EXPORT CUresult ptname params { return body; }


/* ------------------------------------------------------------------ CUDA arrays (arrays.c) */

/* cuMemcpy2D where a side is a CUDA array. */
CUresult cricket_drv_copy_2d_arrays(const CUDA_MEMCPY2D *c, CUstream stream, int is_async);

/* ------------------------------------------------------------------ export tables (export_tables.c) */

/* The dark-API table for a UUID, or NULL when the UUID is refused. */
const void *cricket_drv_export_table(const CUuuid *id);

/* ------------------------------------------------------------------ procedure addresses (proc_table.c, generated) */

struct cricket_drv_proc {
    const char *name;   /* documented name, e.g. "cuMemcpyHtoD" */
    int version;        /* the cudaTypedefs.h version (PFN_cuMemcpyHtoD_v3020 -> 3020) */
    void *legacy;       /* the ABI symbol for the default/legacy stream */
    void *per_thread;   /* its _ptds/_ptsz twin, or NULL */
};
/* Sorted by name, then by version ascending. */
extern const struct cricket_drv_proc cricket_drv_procs[];
extern const size_t cricket_drv_proc_count;

/* Context-local storage (contexts.c), behind the CLS export table. */
CUresult cricket_drv_cls_put(CUcontext ctx, void *key, void *value, void *destructor);
CUresult cricket_drv_cls_delete(CUcontext ctx, void *key);
CUresult cricket_drv_cls_get(void **value, CUcontext ctx, void *key);
/* CUresult names and descriptions (error_strings.c, generated), sorted by value. */
struct cricket_drv_error {
    int value;
    const char *name;
    const char *description;
};
extern const struct cricket_drv_error cricket_drv_errors[];
extern const size_t cricket_drv_error_count;

#endif
