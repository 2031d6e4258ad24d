/* cuGetProcAddress: (name, CUDA version, flags) -> the function of that version's ABI, from the
 * table gen_driver.py builds out of cudaTypedefs.h; and the error-string queries. Both are
 * answered in the process. */
#include <string.h>

#include "driver.h"

/* The entry for `name` with the highest version <= cuda_version; *found_name tells apart an
 * unknown name from one whose first version is newer than asked. */
static const struct cricket_drv_proc *find_proc(const char *name, int cuda_version, int *found_name)
{
    size_t lo = 0, hi = cricket_drv_proc_count;
    while (lo < hi) {                       /* first entry with this name */
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(cricket_drv_procs[mid].name, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    const struct cricket_drv_proc *best = NULL;
    *found_name = 0;
    for (size_t i = lo; i < cricket_drv_proc_count && !strcmp(cricket_drv_procs[i].name, name); i++) {
        *found_name = 1;
        if (cricket_drv_procs[i].version <= cuda_version)
            best = &cricket_drv_procs[i];
    }
    return best;
}

CRICKET_DRV_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                                                CUdriverProcAddressQueryResult *symbolStatus)
{
    if (!symbol || !pfn)
        return CUDA_ERROR_INVALID_VALUE;
    if (flags & ~(cuuint64_t)(CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM))
        return CUDA_ERROR_INVALID_VALUE;
    int found_name;
    const struct cricket_drv_proc *proc = find_proc(symbol, cudaVersion, &found_name);
    if (!proc) {
        *pfn = NULL;
        if (symbolStatus)
            *symbolStatus = found_name ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                                       : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        if (cricket_drv_log_enabled(CRICKET_DRV_DEBUG))
            cricket_drv_log(CRICKET_DRV_DEBUG, "cuGetProcAddress(\"%s\", %d): %s", symbol, cudaVersion,
                            found_name ? "no version that old" : "unknown name");
        return CUDA_ERROR_NOT_FOUND;
    }
    int per_thread = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) && proc->per_thread;
    *pfn = per_thread ? proc->per_thread : proc->legacy;
    if (symbolStatus)
        *symbolStatus = CU_GET_PROC_ADDRESS_SUCCESS;
    return CUDA_SUCCESS;
}

CRICKET_DRV_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    return cuGetProcAddress_v2(symbol, pfn, cudaVersion, flags, NULL);
}

static const struct cricket_drv_error *find_error(CUresult error)
{
    size_t lo = 0, hi = cricket_drv_error_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cricket_drv_errors[mid].value < (int)error)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < cricket_drv_error_count && cricket_drv_errors[lo].value == (int)error ? &cricket_drv_errors[lo] : NULL;
}

CRICKET_DRV_EXPORT CUresult cuGetErrorName(CUresult error, const char **pStr)
{
    if (!pStr)
        return CUDA_ERROR_INVALID_VALUE;
    const struct cricket_drv_error *e = find_error(error);
    *pStr = e ? e->name : NULL;
    return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CRICKET_DRV_EXPORT CUresult cuGetErrorString(CUresult error, const char **pStr)
{
    if (!pStr)
        return CUDA_ERROR_INVALID_VALUE;
    const struct cricket_drv_error *e = find_error(error);
    *pStr = e ? e->description : NULL;
    return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
