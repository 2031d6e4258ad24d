/* Library calls beyond forward.c's (cricket/client/driver_api.py): loading from a file, counting
 * and enumerating a library's kernels, and kernel names. */
#include <stdint.h>

#include "driver.h"

#define U(x) ((uint64_t)(uintptr_t)(x))
#define FORWARD(name, ...) \
    cricket_drv_forward(name, (const uint64_t[]){ __VA_ARGS__ }, sizeof((const uint64_t[]){ __VA_ARGS__ }) / 8)

CRICKET_DRV_EXPORT CUresult cuLibraryLoadFromFile(CUlibrary *library, const char *fileName, CUjit_option *jitOptions,
                                                  void **jitOptionsValues, unsigned int numJitOptions,
                                                  CUlibraryOption *libraryOptions, void **libraryOptionValues,
                                                  unsigned int numLibraryOptions)
{ return FORWARD("cuLibraryLoadFromFile", U(library), U(fileName)); }
CRICKET_DRV_EXPORT CUresult cuLibraryGetKernelCount(unsigned int *count, CUlibrary lib)
{ return FORWARD("cuLibraryGetKernelCount", U(count), U(lib)); }
CRICKET_DRV_EXPORT CUresult cuLibraryEnumerateKernels(CUkernel *kernels, unsigned int numKernels, CUlibrary lib)
{ return FORWARD("cuLibraryEnumerateKernels", U(kernels), numKernels, U(lib)); }
CRICKET_DRV_EXPORT CUresult cuFuncGetName(const char **name, CUfunction hfunc)
{ return FORWARD("cuFuncGetName", U(name), U(hfunc)); }
CRICKET_DRV_EXPORT CUresult cuKernelGetName(const char **name, CUkernel hfunc)
{ return FORWARD("cuFuncGetName", U(name), U(hfunc)); }
