/* Library management (CUDA 12+) and kernel names, forwarded to cricket/client/libraries.py
 * (forward_call.h says how). */
#include <stddef.h>

#include "forward_call.h"

#define I(x) ((uint64_t)(int64_t)(x))

CRICKET_EXPORT cudaError_t cudaLibraryLoadData(cudaLibrary_t *library, const void *code, enum cudaJitOption *jitOptions,
                                               void **jitOptionsValues, unsigned int numJitOptions,
                                               enum cudaLibraryOption *libraryOptions, void **libraryOptionValues,
                                               unsigned int numLibraryOptions)
{
    FORWARD(U(library), U(code), U(jitOptions), U(jitOptionsValues), numJitOptions, U(libraryOptions),
            U(libraryOptionValues), numLibraryOptions);
}

CRICKET_EXPORT cudaError_t cudaLibraryLoadFromFile(cudaLibrary_t *library, const char *fileName,
                                                   enum cudaJitOption *jitOptions, void **jitOptionsValues,
                                                   unsigned int numJitOptions, enum cudaLibraryOption *libraryOptions,
                                                   void **libraryOptionValues, unsigned int numLibraryOptions)
{
    FORWARD(U(library), U(fileName), U(jitOptions), U(jitOptionsValues), numJitOptions, U(libraryOptions),
            U(libraryOptionValues), numLibraryOptions);
}

CRICKET_EXPORT cudaError_t cudaLibraryUnload(cudaLibrary_t library) { FORWARD(U(library)); }
CRICKET_EXPORT cudaError_t cudaLibraryGetKernel(cudaKernel_t *pKernel, cudaLibrary_t library, const char *name)
{ FORWARD(U(pKernel), U(library), U(name)); }
CRICKET_EXPORT cudaError_t cudaLibraryGetGlobal(void **dptr, size_t *bytes, cudaLibrary_t library, const char *name)
{ FORWARD(U(dptr), U(bytes), U(library), U(name)); }
CRICKET_EXPORT cudaError_t cudaLibraryGetKernelCount(unsigned int *count, cudaLibrary_t lib)
{ FORWARD(U(count), U(lib)); }
CRICKET_EXPORT cudaError_t cudaLibraryEnumerateKernels(cudaKernel_t *kernels, unsigned int numKernels, cudaLibrary_t lib)
{ FORWARD(U(kernels), numKernels, U(lib)); }
CRICKET_EXPORT cudaError_t cudaKernelSetAttributeForDevice(cudaKernel_t kernel, enum cudaFuncAttribute attr, int value,
                                                           int device)
{ FORWARD(U(kernel), I(attr), I(value), I(device)); }
CRICKET_EXPORT cudaError_t cudaFuncGetName(const char **name, const void *func) { FORWARD(U(name), U(func)); }
