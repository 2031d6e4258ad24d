/* Internal interface of the cricket libcudart.so.13 shim (see shim.c for the lifecycle rules). */
#ifndef CRICKET_SHIM_H
#define CRICKET_SHIM_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h>
#include "cudart13_prototypes.h"   /* generated: header prototypes of the __cuda* entry points */

#define CRICKET_EXPORT __attribute__((visibility("default")))
#define CRICKET_LIKELY(x) __builtin_expect(!!(x), 1)

/* The Cython module the shim imports and the prefix of its `cdef api` functions. */
#define CRICKET_CLIENT_MODULE "cricket._cext.cudart_api"

typedef atomic_int cricket_once_flag;

enum cricket_log_level { CRICKET_DEBUG = 10, CRICKET_INFO = 20, CRICKET_WARNING = 30, CRICKET_ERROR = 40 };
void cricket_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Logs "NAME is not implemented" the first time `seen` is passed for it. */
void cricket_unimplemented(const char *name, cricket_once_flag *seen);

/* Lifecycle (finding or starting Python, threads, fork, exit): cext/common/bootstrap.c. */
#include "bootstrap.h"
#define CRICKET_UNINIT CRICKET_BS_UNINIT
#define CRICKET_READY CRICKET_BS_READY
#define CRICKET_FAILED CRICKET_BS_FAILED
#define CRICKET_DEAD CRICKET_BS_DEAD
extern const struct cricket_bootstrap_config cricket_shim_config;

/* 0 when the client may be called from this thread now, else the state that forbids it. */
static inline int cricket_enter(void)
{
    return cricket_bootstrap_enter(&cricket_shim_config);
}

/* Opens and cuInit()s the process's libcuda.so.1 once, before the first runtime call, as
 * NVIDIA's cudart does (driver_link.c). */
extern atomic_int cricket_driver_linked;
void cricket_driver_link_slow(void);
static inline void cricket_driver_link(void)
{
    if (__builtin_expect(!atomic_load_explicit(&cricket_driver_linked, memory_order_acquire), 0))
        cricket_driver_link_slow();
}

/* A symbol of the libcuda.so.1 that cricket_driver_link opened; NULL when there is none. */
void *cricket_driver_symbol(const char *name);

/* The runtime's primary contexts (primary_context.c). Before the runtime call `name`: the driver
 * link, and, when the call needs a context and the thread has none, the primary context of the
 * thread's device initialised and made current. After a successful cudaSetDevice, cudaInitDevice
 * and cudaDeviceReset: what each does to the primary context. */
void cricket_runtime_context(const char *name);
void cricket_runtime_set_device(int device);
void cricket_runtime_init_device(int device);
void cricket_runtime_reset_device(void);

/* The error a cudaError_t function returns when cricket_enter() refused. */
cudaError_t cricket_unavailable_error(int state);

/* What the forwarded call `name` returns when cricket_enter() refused with `state`: after the
 * client finished, the answers destructors need (client_finished.c); else the error. */
cudaError_t cricket_after_client(const char *name, const uint64_t *args, int state);
/* The calling thread's current device, as cudaGetDevice or cudaSetDevice last reported it. */
void cricket_note_device(int device);
int cricket_noted_device(void);

/* Function pointers taken from the `cdef api` functions of CRICKET_CLIENT_MODULE. */
struct cricket_client_api {
    int (*attach)(void (*mark_dead)(void), int embedded);
    const char *(*get_error_string)(int error);
    const char *(*get_error_name)(int error);
    int (*runtime_get_version)(int *version);
    void **(*register_fat_binary)(void *fat_cubin);
    void (*register_fat_binary_end)(void **handle);
    void (*unregister_fat_binary)(void **handle);
    void (*register_function)(void **handle, const char *host_fun, char *device_fun,
                              const char *device_name, int thread_limit, void *tid, void *bid,
                              void *block_dim, void *grid_dim, int *warp_size);
    void (*register_var)(void **handle, char *host_var, char *device_address, const char *device_name,
                         int ext, size_t size, int constant, int global);
    void (*register_managed_var)(void **handle, void **host_var_ptr_address, char *device_address,
                                 const char *device_name, int ext, size_t size, int constant, int global);
    char (*init_module)(void **handle);
    /* the generic entry of forward_runtime.c: CUDA function `name`, arguments as 64-bit words */
    int (*call)(const char *name, const uint64_t *args, int nargs);
};
extern struct cricket_client_api cricket_api;

#endif
