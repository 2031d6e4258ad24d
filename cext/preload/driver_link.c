/* The runtime shim's link to the driver library, as NVIDIA's cudart has it: at the first runtime
 * call the process's libcuda.so.1 (cricket's replacement, first on the loader's path under
 * `cricket run`) is opened and initialised with cuInit(0), so programs that call the driver API
 * directly beside the runtime (PyTorch: cuDevicePrimaryCtxGetState) find it initialised; and
 * cudaGetDriverEntryPoint(ByVersion) hands out that library's entry points through its
 * cuGetProcAddress_v2. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <cuda.h>
#include "shim.h"

typedef CUresult (*init_fn)(unsigned int);
typedef CUresult (*proc_address_fn)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);

static pthread_once_t link_once = PTHREAD_ONCE_INIT;
static proc_address_fn proc_address;
static void *driver_lib;
atomic_int cricket_driver_linked;

static void link_driver(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        cricket_log(CRICKET_DEBUG, "no libcuda.so.1 to initialise (%s): driver entry points unavailable", dlerror());
        return;
    }
    driver_lib = lib;
    init_fn init = (init_fn)dlsym(lib, "cuInit");
    proc_address = (proc_address_fn)dlsym(lib, "cuGetProcAddress_v2");
    CUresult rc = init ? init(0) : CUDA_ERROR_NOT_FOUND;
    cricket_log(rc == CUDA_SUCCESS ? CRICKET_DEBUG : CRICKET_WARNING,
                "implicit cuInit(0) of libcuda.so.1 returned %d", (int)rc);
}

void cricket_driver_link_slow(void)
{
    pthread_once(&link_once, link_driver);
    atomic_store_explicit(&cricket_driver_linked, 1, memory_order_release);
}

void *cricket_driver_symbol(const char *name)
{
    cricket_driver_link();
    return driver_lib ? dlsym(driver_lib, name) : NULL;
}

static cudaError_t entry_point(const char *symbol, void **funcPtr, unsigned int cudaVersion,
                               unsigned long long flags, enum cudaDriverEntryPointQueryResult *driverStatus)
{
    if (!symbol || !funcPtr)
        return cudaErrorInvalidValue;
    cricket_driver_link();
    *funcPtr = NULL;
    if (!proc_address) {
        if (driverStatus)
            *driverStatus = cudaDriverEntryPointSymbolNotFound;
        return cudaErrorNotSupported;
    }
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    CUresult rc = proc_address(symbol, funcPtr, (int)cudaVersion, (cuuint64_t)flags, &status);
    if (driverStatus)
        *driverStatus = (enum cudaDriverEntryPointQueryResult)status;
    /* An unknown symbol or too new a version is a status, not an error (the pointer stays NULL). */
    if (rc == CUDA_SUCCESS || rc == CUDA_ERROR_NOT_FOUND)
        return cudaSuccess;
    return rc == CUDA_ERROR_INVALID_VALUE ? cudaErrorInvalidValue : cudaErrorNotSupported;
}

CRICKET_EXPORT cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **funcPtr, unsigned long long flags,
                                                   enum cudaDriverEntryPointQueryResult *driverStatus)
{ return entry_point(symbol, funcPtr, CUDART_VERSION, flags, driverStatus); }

CRICKET_EXPORT cudaError_t cudaGetDriverEntryPoint_ptsz(const char *symbol, void **funcPtr, unsigned long long flags,
                                                        enum cudaDriverEntryPointQueryResult *driverStatus)
{ return entry_point(symbol, funcPtr, CUDART_VERSION, flags ? flags : cudaEnablePerThreadDefaultStream, driverStatus); }

CRICKET_EXPORT cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **funcPtr, unsigned int cudaVersion,
                                                            unsigned long long flags,
                                                            enum cudaDriverEntryPointQueryResult *driverStatus)
{ return entry_point(symbol, funcPtr, cudaVersion, flags, driverStatus); }

CRICKET_EXPORT cudaError_t cudaGetDriverEntryPointByVersion_ptsz(const char *symbol, void **funcPtr,
                                                                 unsigned int cudaVersion, unsigned long long flags,
                                                                 enum cudaDriverEntryPointQueryResult *driverStatus)
{ return entry_point(symbol, funcPtr, cudaVersion, flags ? flags : cudaEnablePerThreadDefaultStream, driverStatus); }
