/* The libcudart.so.13 functions cricket implements: each one enters the client (starting it at the
 * first call) and forwards to the `cdef api` function of cricket._cext.cudart_api, which calls
 * cricket.client.runtime_api. Every other export is a generated stub (gen_stubs.py).
 *
 * gen_stubs.py finds the names defined here from the lines starting with CRICKET_EXPORT, and the
 * prototypes come from the CUDA headers (cudart13_prototypes.h), so the compiler checks them. */
#include <string.h>
#include "shim.h"

/* What __cudaRegisterFatBinary returns when the client is unavailable: nvcc's code only needs a
 * stable non-NULL handle, and cudart-internal code may look into it (Cricket uses 0x58 bytes). */
static void *fallback_fatbin_handle[0x58 / sizeof(void *)];

CRICKET_EXPORT const char *cudaGetErrorString(cudaError_t error)
{
    int state = cricket_enter();
    if (state != 0)
        return state == CRICKET_DEAD ? "CUDA runtime is unloading (cricket client finished)"
                                     : "cricket client unavailable (see the log on stderr)";
    return cricket_api.get_error_string((int)error);
}

CRICKET_EXPORT const char *cudaGetErrorName(cudaError_t error)
{
    int state = cricket_enter();
    if (state != 0)
        return state == CRICKET_DEAD ? "cudaErrorCudartUnloading" : "cudaErrorInitializationError";
    return cricket_api.get_error_name((int)error);
}

CRICKET_EXPORT cudaError_t cudaRuntimeGetVersion(int *runtimeVersion)
{
    int state = cricket_enter();
    if (state != 0)
        return cricket_unavailable_error(state);
    return (cudaError_t)cricket_api.runtime_get_version(runtimeVersion);
}

CRICKET_EXPORT void **__cudaRegisterFatBinary(void *fatCubin)
{
    if (cricket_enter() != 0)
        return fallback_fatbin_handle;
    void **handle = cricket_api.register_fat_binary(fatCubin);
    return handle ? handle : fallback_fatbin_handle;
}

CRICKET_EXPORT void __cudaRegisterFatBinaryEnd(void **fatCubinHandle)
{
    if (cricket_enter() == 0 && fatCubinHandle != fallback_fatbin_handle)
        cricket_api.register_fat_binary_end(fatCubinHandle);
}

CRICKET_EXPORT void __cudaUnregisterFatBinary(void **fatCubinHandle)
{
    int state = cricket_enter();
    if (state == 0 && fatCubinHandle != fallback_fatbin_handle)
        cricket_api.unregister_fat_binary(fatCubinHandle);
    else if (state == CRICKET_DEAD)    /* nvcc's atexit hook after Python finalised: nothing to do */
        cricket_log(CRICKET_DEBUG, "__cudaUnregisterFatBinary after the client finished: ignored");
}

CRICKET_EXPORT void __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun, char *deviceFun,
                                           const char *deviceName, int thread_limit, uint3 *tid,
                                           uint3 *bid, dim3 *bDim, dim3 *gDim, int *wSize)
{
    if (cricket_enter() == 0 && fatCubinHandle != fallback_fatbin_handle)
        cricket_api.register_function(fatCubinHandle, hostFun, deviceFun, deviceName, thread_limit,
                                      tid, bid, bDim, gDim, wSize);
}

CRICKET_EXPORT void __cudaRegisterVar(void **fatCubinHandle, char *hostVar, char *deviceAddress,
                                      const char *deviceName, int ext, size_t size, int constant,
                                      int global)
{
    if (cricket_enter() == 0 && fatCubinHandle != fallback_fatbin_handle)
        cricket_api.register_var(fatCubinHandle, hostVar, deviceAddress, deviceName, ext, size,
                                 constant, global);
}

CRICKET_EXPORT void __cudaRegisterManagedVar(void **fatCubinHandle, void **hostVarPtrAddress,
                                             char *deviceAddress, const char *deviceName, int ext,
                                             size_t size, int constant, int global)
{
    if (cricket_enter() == 0 && fatCubinHandle != fallback_fatbin_handle)
        cricket_api.register_managed_var(fatCubinHandle, hostVarPtrAddress, deviceAddress,
                                         deviceName, ext, size, constant, global);
}

CRICKET_EXPORT char __cudaInitModule(void **fatCubinHandle)
{
    if (cricket_enter() != 0 || fatCubinHandle == fallback_fatbin_handle)
        return 0;
    return cricket_api.init_module(fatCubinHandle);
}
