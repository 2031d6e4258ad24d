/* Finding or starting Python from a native CUDA library, shared by cricket's C libraries
 * (the libcuda.so.1 replacement today; the libcudart.so.13 shim has its own copy until it is
 * switched over, see cext/common/README.md).
 *
 * A library describes itself once in a `struct cricket_bootstrap_config` (the Cython module to
 * import, the `cdef api` capsules to take and the slots they go to, its log function) and calls
 * cricket_bootstrap_enter(cfg) before every call into Python. The library never links libpython:
 * every C-API function is looked up with dlsym at the first call that reaches the client. */
#ifndef CRICKET_BOOTSTRAP_H
#define CRICKET_BOOTSTRAP_H

#include <stdatomic.h>
#include <stddef.h>

#define CRICKET_BOOTSTRAP_LIKELY(x) __builtin_expect(!!(x), 1)

/* Log levels (the numbers of Python's logging module). */
enum { CRICKET_BS_DEBUG = 10, CRICKET_BS_INFO = 20, CRICKET_BS_WARNING = 30, CRICKET_BS_ERROR = 40 };

/* One `cdef api` function of the client module: the capsule name, its signature as Cython renders
 * it (checked, so a stale build is caught) and where its pointer goes. */
struct cricket_bootstrap_capi {
    const char *name;
    const char *signature;
    void **slot;
};

struct cricket_bootstrap_config {
    const char *module;                                  /* e.g. "cricket._cext.cuda_api" */
    const struct cricket_bootstrap_capi *capi;
    size_t capi_count;
    /* Called once the capsules are taken (with the GIL not held by the caller: the function takes
     * it itself); 0 means the client is ready. `embedded` when the library started Python. */
    int (**attach)(void (*mark_dead)(void), int embedded);
    void (*log)(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
};

/* States: the client is usable only in READY; DEAD is final (Python finalised or exiting). */
enum { CRICKET_BS_UNINIT = 0, CRICKET_BS_READY = 1, CRICKET_BS_FAILED = 2, CRICKET_BS_DEAD = 3 };
extern atomic_int cricket_bootstrap_state;
extern __thread int cricket_bootstrap_thread_ready;

/* Slow path: start the client (first call) and adopt this thread. */
int cricket_bootstrap_enter_slow(const struct cricket_bootstrap_config *cfg);

/* 0 when the client may be called from this thread now, else the state that forbids it. */
static inline int cricket_bootstrap_enter(const struct cricket_bootstrap_config *cfg)
{
    if (CRICKET_BOOTSTRAP_LIKELY(atomic_load_explicit(&cricket_bootstrap_state, memory_order_acquire)
                                 == CRICKET_BS_READY && cricket_bootstrap_thread_ready))
        return 0;
    return cricket_bootstrap_enter_slow(cfg);
}

#endif
