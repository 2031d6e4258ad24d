/* The driver calls forwarded to the cricket client (Python, cricket.client.driver_api), through
 * the `cdef api` entry of cricket._cext.cuda_api. Arguments travel as 64-bit words with the
 * function's documented name (legacy and per-thread twins share one name; the per-thread default
 * stream is the server's default stream, ordered with the legacy one). The Python side writes
 * out-parameters itself and returns the CUresult.
 *
 * The calls go through the bridge (bridge.c, `cricket_drv_client_call`), which starts the client at
 * the first forwarded call, or at cuInit when the device snapshot comes from the server (devices.c). */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"

#define U(x) ((uint64_t)(uintptr_t)(x))

/* Test knob CRICKET_DRIVER_FAIL="NAME=CODE[,NAME=CODE...]": the forwarded call with the documented
 * name NAME returns CODE without reaching the client (NAME "cricketPointerInfo" stands for both
 * pointer-attribute calls). It shows which CUresult NVIDIA's cudart turns into which cudaError_t. */
static const char *fail_spec(void)
{
    static _Atomic(const char *) spec = (const char *)1;
    const char *s = atomic_load_explicit(&spec, memory_order_relaxed);
    if (CRICKET_UNLIKELY(s == (const char *)1)) {
        s = getenv("CRICKET_DRIVER_FAIL");
        if (s && !*s)
            s = NULL;
        atomic_store_explicit(&spec, s, memory_order_relaxed);
    }
    return s;
}

static int injected_failure(const char *name, CUresult *rc)
{
    size_t len = strlen(name);
    for (const char *p = fail_spec(); p && *p; ) {
        const char *end = strchr(p, ',');
        size_t item = end ? (size_t)(end - p) : strlen(p);
        if (item > len + 1 && strncmp(p, name, len) == 0 && p[len] == '=') {
            *rc = (CUresult)strtol(p + len + 1, NULL, 10);
            cricket_drv_log(CRICKET_DRV_INFO, "CRICKET_DRIVER_FAIL is set: %s returns %d", name, (int)*rc);
            return 1;
        }
        p = end ? end + 1 : NULL;
    }
    return 0;
}

/* The device the client has as this thread's (cricket.client.runtime's per-thread device, which
 * the server session follows): told when the current context's device differs, so a program that
 * uses device 0 only never pays for it. Likewise the current context's id (0 for a primary
 * context), under which the client files what this thread makes (freed by cuCtxDestroy). */
static __thread CUdevice told_device;
static __thread uint64_t told_context;

/* A forwarded call: cuInit must have succeeded, as with NVIDIA's driver. */
static CUresult forward(const char *name, const uint64_t *args, int nargs)
{
    CUresult rc = cricket_drv_check_init();
    if (CRICKET_UNLIKELY(rc != CUDA_SUCCESS))
        return rc;
    if (CRICKET_UNLIKELY(fail_spec() != NULL) && injected_failure(name, &rc))
        return rc;
    CUcontext ctx = cricket_drv_current_context();
    if (CRICKET_UNLIKELY(ctx != NULL && atomic_load_explicit(&ctx->destroyed, memory_order_relaxed)))
        return CUDA_ERROR_CONTEXT_IS_DESTROYED;     /* destroyed by another thread, still current here */
    if (CRICKET_UNLIKELY(ctx != NULL && ctx->device != told_device)) {
        uint64_t device = (uint64_t)ctx->device;
        rc = cricket_drv_client_call("cricketSetDevice", &device, 1);
        if (rc != CUDA_SUCCESS)
            return rc;
        told_device = ctx->device;
    }
    uint64_t context = ctx ? ctx->id : 0;
    if (CRICKET_UNLIKELY(context != told_context)) {
        if (ctx)
            atomic_store(&ctx->told, 1);
        rc = cricket_drv_client_call("cricketSetContext", &context, 1);
        if (rc != CUDA_SUCCESS)
            return rc;
        told_context = context;
    }
    return cricket_drv_client_call(name, args, nargs);
}

CUresult cricket_drv_forward(const char *name, const uint64_t *args, int nargs)
{
    return forward(name, args, nargs);
}

/* A release (free, unload, destroy) after the client has shut down: the server frees what the
 * session held when its connection closes, so the caller (a destructor or cudart's exit hook)
 * gets success, as NVIDIA's driver gives it until the process ends. */
static CUresult forward_release(const char *name, const uint64_t *args, int nargs)
{
    CUresult rc = forward(name, args, nargs);
    return rc == CUDA_ERROR_DEINITIALIZED ? CUDA_SUCCESS : rc;
}

#define RELEASE(name, ...) forward_release(name, (const uint64_t[]){ __VA_ARGS__ }, \
                                           (int)(sizeof((const uint64_t[]){ __VA_ARGS__ }) / sizeof(uint64_t)))

#define FWD(name, ...) forward(name, (const uint64_t[]){ __VA_ARGS__ }, \
                               (int)(sizeof((const uint64_t[]){ __VA_ARGS__ }) / sizeof(uint64_t)))

/* ------------------------------------------------------------------ memory */

CRICKET_DRV_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{ return FWD("cuMemAlloc", U(dptr), bytesize); }
CRICKET_DRV_EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr)
{ return RELEASE("cuMemFree", dptr); }
CRICKET_DRV_EXPORT CUresult cuMemGetInfo_v2(size_t *free, size_t *total)
{ return FWD("cuMemGetInfo", U(free), U(total)); }
CRICKET_DRV_EXPORT CUresult cuMemAllocHost_v2(void **pp, size_t bytesize)
{ return FWD("cuMemHostAlloc", U(pp), bytesize, 0); }
CRICKET_DRV_EXPORT CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
{ return FWD("cuMemHostAlloc", U(pp), bytesize, Flags); }
CRICKET_DRV_EXPORT CUresult cuMemFreeHost(void *p)
{ return RELEASE("cuMemFreeHost", U(p)); }
CRICKET_DRV_EXPORT CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *pdptr, void *p, unsigned int Flags)
{ return FWD("cuMemHostGetDevicePointer", U(pdptr), U(p), Flags); }
CRICKET_DRV_EXPORT CUresult cuMemHostGetFlags(unsigned int *pFlags, void *p)
{ return FWD("cuMemHostGetFlags", U(pFlags), U(p)); }
CRICKET_DRV_EXPORT CUresult cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr)
{ return FWD("cuMemGetAddressRange", U(pbase), U(psize), dptr); }

/* Pointer attributes: Python classifies the address (device allocation, pinned host memory or
 * unknown) and gives its range; the attribute encoding is done here. */
struct pointer_info {
    uint64_t kind;      /* 0 unknown, CU_MEMORYTYPE_HOST, CU_MEMORYTYPE_DEVICE */
    uint64_t base;
    uint64_t size;
    uint64_t device;
    uint64_t buffer_id;
    uint64_t context;   /* the id of the created context it was allocated in; 0: the primary one */
    uint64_t device_pointer;    /* where kernels reach it (0: nowhere; mapped memory: its device copy) */
    uint64_t host_pointer;      /* where the host reaches it (0: nowhere) */
    uint64_t mapped;            /* reachable from the device (2: managed memory, reachable from both) */
};

static CUresult pointer_info(CUdeviceptr ptr, struct pointer_info *info)
{
    memset(info, 0, sizeof *info);
    return FWD("cricketPointerInfo", ptr, U(info));
}

static CUresult pointer_attribute(const struct pointer_info *info, CUpointer_attribute attribute,
                                  CUdeviceptr ptr, void *data)
{
    int known = info->kind != 0;
    int device = info->kind == CU_MEMORYTYPE_DEVICE;
    switch (attribute) {
    case CU_POINTER_ATTRIBUTE_CONTEXT:
        *(CUcontext *)data = !known ? NULL : info->context ? cricket_drv_created_context(info->context)
                                                           : cricket_drv_primary_context((CUdevice)info->device);
        return known ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
        *(unsigned int *)data = (unsigned int)info->kind;
        return known ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
        *(CUdeviceptr *)data = (CUdeviceptr)info->device_pointer;
        return known && info->device_pointer ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
        *(void **)data = (void *)(uintptr_t)info->host_pointer;
        return known && (!device || info->mapped == 2) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
        *(int *)data = known;
        return known ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    case CU_POINTER_ATTRIBUTE_MAPPED:
        *(int *)data = info->mapped != 0;
        return known ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED:
        *(int *)data = info->mapped == 2;
        return known ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
    case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
        *(int *)data = 0;
        return known ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    case CU_POINTER_ATTRIBUTE_BUFFER_ID:
        *(unsigned long long *)data = info->buffer_id;
        return known ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
        *(int *)data = known ? (int)info->device : -2;
        return known ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
        *(CUdeviceptr *)data = info->base;
        return known ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
        *(size_t *)data = info->size;
        return known ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
        *(unsigned long long *)data = 0;
        return known ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
        *(void **)data = NULL;
        return known ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    default:
        return CUDA_ERROR_NOT_SUPPORTED;
    }
}

CRICKET_DRV_EXPORT CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr)
{
    if (!data)
        return CUDA_ERROR_INVALID_VALUE;
    struct pointer_info info;
    CUresult rc = pointer_info(ptr, &info);
    return rc != CUDA_SUCCESS ? rc : pointer_attribute(&info, attribute, ptr, data);
}

/* As NVIDIA's driver: unknown memory is no error here; each attribute gets its "none" value. */
CRICKET_DRV_EXPORT CUresult cuPointerGetAttributes(unsigned int numAttributes, CUpointer_attribute *attributes,
                                                   void **data, CUdeviceptr ptr)
{
    if (!attributes || !data)
        return CUDA_ERROR_INVALID_VALUE;
    struct pointer_info info;
    CUresult rc = pointer_info(ptr, &info);
    if (rc != CUDA_SUCCESS)
        return rc;
    for (unsigned int i = 0; i < numAttributes; i++) {
        if (!data[i])
            continue;
        rc = pointer_attribute(&info, attributes[i], ptr, data[i]);
        if (rc == CUDA_ERROR_NOT_SUPPORTED)
            return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------ copies and memsets */

#define CRICKET_DRV_EXPORT_PAIR(abi, ptname, params, name, ...) \
    CRICKET_DRV_EXPORT CUresult abi params { return FWD(name, __VA_ARGS__); } \
    CRICKET_DRV_EXPORT CUresult ptname params { return FWD(name, __VA_ARGS__); }

CRICKET_DRV_EXPORT_PAIR(cuMemcpyHtoD_v2, cuMemcpyHtoD_v2_ptds, (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount),
          "cuMemcpyHtoD", dstDevice, U(srcHost), ByteCount, 0, 0)
CRICKET_DRV_EXPORT_PAIR(cuMemcpyDtoH_v2, cuMemcpyDtoH_v2_ptds, (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount),
          "cuMemcpyDtoH", U(dstHost), srcDevice, ByteCount, 0, 0)
CRICKET_DRV_EXPORT_PAIR(cuMemcpyDtoD_v2, cuMemcpyDtoD_v2_ptds, (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount),
          "cuMemcpyDtoD", dstDevice, srcDevice, ByteCount, 0, 0)
CRICKET_DRV_EXPORT_PAIR(cuMemcpy, cuMemcpy_ptds, (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount),
          "cuMemcpy", dst, src, ByteCount, 0, 0)
CRICKET_DRV_EXPORT_PAIR(cuMemcpyHtoDAsync_v2, cuMemcpyHtoDAsync_v2_ptsz,
          (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount, CUstream hStream),
          "cuMemcpyHtoD", dstDevice, U(srcHost), ByteCount, U(hStream), 1)
CRICKET_DRV_EXPORT_PAIR(cuMemcpyDtoHAsync_v2, cuMemcpyDtoHAsync_v2_ptsz,
          (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream),
          "cuMemcpyDtoH", U(dstHost), srcDevice, ByteCount, U(hStream), 1)
CRICKET_DRV_EXPORT_PAIR(cuMemcpyDtoDAsync_v2, cuMemcpyDtoDAsync_v2_ptsz,
          (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream),
          "cuMemcpyDtoD", dstDevice, srcDevice, ByteCount, U(hStream), 1)
CRICKET_DRV_EXPORT_PAIR(cuMemcpyAsync, cuMemcpyAsync_ptsz, (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream),
          "cuMemcpy", dst, src, ByteCount, U(hStream), 1)

CRICKET_DRV_EXPORT_PAIR(cuMemsetD8_v2, cuMemsetD8_v2_ptds, (CUdeviceptr dstDevice, unsigned char uc, size_t N),
          "cuMemset", dstDevice, uc, N, 1, 0, 0)
CRICKET_DRV_EXPORT_PAIR(cuMemsetD16_v2, cuMemsetD16_v2_ptds, (CUdeviceptr dstDevice, unsigned short us, size_t N),
          "cuMemset", dstDevice, us, N, 2, 0, 0)
CRICKET_DRV_EXPORT_PAIR(cuMemsetD32_v2, cuMemsetD32_v2_ptds, (CUdeviceptr dstDevice, unsigned int ui, size_t N),
          "cuMemset", dstDevice, ui, N, 4, 0, 0)
CRICKET_DRV_EXPORT_PAIR(cuMemsetD8Async, cuMemsetD8Async_ptsz, (CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream),
          "cuMemset", dstDevice, uc, N, 1, U(hStream), 1)
CRICKET_DRV_EXPORT_PAIR(cuMemsetD16Async, cuMemsetD16Async_ptsz, (CUdeviceptr dstDevice, unsigned short us, size_t N, CUstream hStream),
          "cuMemset", dstDevice, us, N, 2, U(hStream), 1)
CRICKET_DRV_EXPORT_PAIR(cuMemsetD32Async, cuMemsetD32Async_ptsz, (CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream),
          "cuMemset", dstDevice, ui, N, 4, U(hStream), 1)

/* ------------------------------------------------------------------ modules and libraries */

CRICKET_DRV_EXPORT CUresult cuModuleLoadData(CUmodule *module, const void *image)
{ return FWD("cuModuleLoadData", U(module), U(image)); }
CRICKET_DRV_EXPORT CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions,
                                               CUjit_option *options, void **optionValues)
{ return FWD("cuModuleLoadData", U(module), U(image)); }
CRICKET_DRV_EXPORT CUresult cuModuleLoadFatBinary(CUmodule *module, const void *fatCubin)
{ return FWD("cuModuleLoadData", U(module), U(fatCubin)); }
CRICKET_DRV_EXPORT CUresult cuModuleUnload(CUmodule hmod)
{ return RELEASE("cuModuleUnload", U(hmod)); }
CRICKET_DRV_EXPORT CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{ return FWD("cuModuleGetFunction", U(hfunc), U(hmod), U(name)); }
CRICKET_DRV_EXPORT CUresult cuModuleGetGlobal_v2(CUdeviceptr *dptr, size_t *bytes, CUmodule hmod, const char *name)
{ return FWD("cuModuleGetGlobal", U(dptr), U(bytes), U(hmod), U(name)); }

CRICKET_DRV_EXPORT CUresult cuLibraryLoadData(CUlibrary *library, const void *code, CUjit_option *jitOptions,
                                              void **jitOptionsValues, unsigned int numJitOptions,
                                              CUlibraryOption *libraryOptions, void **libraryOptionValues,
                                              unsigned int numLibraryOptions)
{ return FWD("cuModuleLoadData", U(library), U(code)); }
CRICKET_DRV_EXPORT CUresult cuLibraryUnload(CUlibrary library)
{ return RELEASE("cuModuleUnload", U(library)); }
CRICKET_DRV_EXPORT CUresult cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library, const char *name)
{ return FWD("cuLibraryGetKernel", U(pKernel), U(library), U(name)); }
CRICKET_DRV_EXPORT CUresult cuLibraryGetModule(CUmodule *pMod, CUlibrary library)
{ return FWD("cuLibraryGetModule", U(pMod), U(library)); }
CRICKET_DRV_EXPORT CUresult cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel)
{ return FWD("cuKernelGetFunction", U(pFunc), U(kernel)); }
CRICKET_DRV_EXPORT CUresult cuLibraryGetGlobal(CUdeviceptr *dptr, size_t *bytes, CUlibrary library, const char *name)
{ return FWD("cuModuleGetGlobal", U(dptr), U(bytes), U(library), U(name)); }

/* ------------------------------------------------------------------ JIT linking (cricket.client.jit_link) */

/* A link needs a current context (its target comes from it), as with NVIDIA's driver. */
static CUresult link_create(unsigned int numOptions, CUjit_option *options, void **optionValues, CUlinkState *stateOut)
{
    CUresult rc = cricket_drv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!cricket_drv_current_context())
        return CUDA_ERROR_INVALID_CONTEXT;
    return FWD("cuLinkCreate", numOptions, U(options), U(optionValues), U(stateOut));
}

CRICKET_DRV_EXPORT CUresult cuLinkCreate_v2(unsigned int numOptions, CUjit_option *options, void **optionValues,
                                            CUlinkState *stateOut)
{ return link_create(numOptions, options, optionValues, stateOut); }
CRICKET_DRV_EXPORT CUresult cuLinkCreate(unsigned int numOptions, CUjit_option *options, void **optionValues,
                                         CUlinkState *stateOut)
{ return link_create(numOptions, options, optionValues, stateOut); }
CRICKET_DRV_EXPORT CUresult cuLinkAddData_v2(CUlinkState state, CUjitInputType type, void *data, size_t size,
                                             const char *name, unsigned int numOptions, CUjit_option *options,
                                             void **optionValues)
{ return FWD("cuLinkAddData", U(state), (uint64_t)type, U(data), size, U(name), numOptions, U(options), U(optionValues)); }
CRICKET_DRV_EXPORT CUresult cuLinkAddData(CUlinkState state, CUjitInputType type, void *data, size_t size,
                                          const char *name, unsigned int numOptions, CUjit_option *options,
                                          void **optionValues)
{ return FWD("cuLinkAddData", U(state), (uint64_t)type, U(data), size, U(name), numOptions, U(options), U(optionValues)); }
CRICKET_DRV_EXPORT CUresult cuLinkAddFile_v2(CUlinkState state, CUjitInputType type, const char *path,
                                             unsigned int numOptions, CUjit_option *options, void **optionValues)
{ return FWD("cuLinkAddFile", U(state), (uint64_t)type, U(path), numOptions, U(options), U(optionValues)); }
CRICKET_DRV_EXPORT CUresult cuLinkAddFile(CUlinkState state, CUjitInputType type, const char *path,
                                          unsigned int numOptions, CUjit_option *options, void **optionValues)
{ return FWD("cuLinkAddFile", U(state), (uint64_t)type, U(path), numOptions, U(options), U(optionValues)); }
CRICKET_DRV_EXPORT CUresult cuLinkComplete(CUlinkState state, void **cubinOut, size_t *sizeOut)
{ return FWD("cuLinkComplete", U(state), U(cubinOut), U(sizeOut)); }
CRICKET_DRV_EXPORT CUresult cuLinkDestroy(CUlinkState state)
{ return RELEASE("cuLinkDestroy", U(state)); }

/* ------------------------------------------------------------------ functions and launches */

CRICKET_DRV_EXPORT CUresult cuFuncGetAttribute(int *pi, CUfunction_attribute attrib, CUfunction hfunc)
{ return FWD("cuFuncGetAttribute", U(pi), (uint64_t)attrib, U(hfunc)); }
/* The cuKernel* calls name a device: one that does not exist is CUDA_ERROR_INVALID_DEVICE. */
#define KERNEL_DEVICE_CHECK(dev) \
    if ((dev) < 0 || (dev) >= cricket_drv_snapshot()->device_count) return CUDA_ERROR_INVALID_DEVICE

CRICKET_DRV_EXPORT CUresult cuKernelGetAttribute(int *pi, CUfunction_attribute attrib, CUkernel kernel, CUdevice dev)
{ KERNEL_DEVICE_CHECK(dev); return FWD("cuFuncGetAttribute", U(pi), (uint64_t)attrib, U(kernel)); }
CRICKET_DRV_EXPORT CUresult cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value)
{ return FWD("cuFuncSetAttribute", U(hfunc), (uint64_t)attrib, (uint64_t)(int64_t)value); }
CRICKET_DRV_EXPORT CUresult cuKernelSetAttribute(CUfunction_attribute attrib, int val, CUkernel kernel, CUdevice dev)
{ KERNEL_DEVICE_CHECK(dev); return FWD("cuFuncSetAttribute", U(kernel), (uint64_t)attrib, (uint64_t)(int64_t)val); }
CRICKET_DRV_EXPORT CUresult cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config)
{ return FWD("cuFuncSetAttribute", U(hfunc), (uint64_t)-1, (uint64_t)config); }
CRICKET_DRV_EXPORT CUresult cuKernelSetCacheConfig(CUkernel kernel, CUfunc_cache config, CUdevice dev)
{ KERNEL_DEVICE_CHECK(dev); return FWD("cuFuncSetAttribute", U(kernel), (uint64_t)-1, (uint64_t)config); }
CRICKET_DRV_EXPORT CUresult cuFuncSetSharedMemConfig(CUfunction hfunc, CUsharedconfig config)
{ return FWD("cuFuncSetAttribute", U(hfunc), (uint64_t)-2, (uint64_t)config); }

#define LAUNCH_WORDS(f, gx, gy, gz, bx, by, bz, shm, stream, params, extra) \
    U(f), gx, gy, gz, bx, by, bz, shm, U(stream), U(params), U(extra)

CRICKET_DRV_EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                           unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                                           unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                                           void **kernelParams, void **extra)
{
    return FWD("cuLaunchKernel", LAUNCH_WORDS(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY,
                                              blockDimZ, sharedMemBytes, hStream, kernelParams, extra));
}

CRICKET_DRV_EXPORT CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                                unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                                                unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                                                void **kernelParams, void **extra)
{
    return FWD("cuLaunchKernel", LAUNCH_WORDS(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY,
                                              blockDimZ, sharedMemBytes, hStream, kernelParams, extra));
}

/* The attributes are checked in Python (cricket.client.launch_attributes, shared with the runtime
 * shim): hints are accepted, what cricket cannot honour fails with CUDA_ERROR_NOT_SUPPORTED. */
static CUresult launch_ex(const CUlaunchConfig *c, CUfunction f, void **kernelParams, void **extra)
{
    if (!c)
        return CUDA_ERROR_INVALID_VALUE;
    return FWD("cuLaunchKernelEx", LAUNCH_WORDS(f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX,
                                                c->blockDimY, c->blockDimZ, c->sharedMemBytes, c->hStream,
                                                kernelParams, extra),
               U(c->attrs), (uint64_t)c->numAttrs);
}

CRICKET_DRV_EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra)
{ return launch_ex(config, f, kernelParams, extra); }
CRICKET_DRV_EXPORT CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra)
{ return launch_ex(config, f, kernelParams, extra); }

CRICKET_DRV_EXPORT CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, CUfunction func,
                                                                        int blockSize, size_t dynamicSMemSize)
{ return FWD("cuOccupancyMaxActiveBlocksPerMultiprocessor", U(numBlocks), U(func), (uint64_t)(int64_t)blockSize, dynamicSMemSize); }
CRICKET_DRV_EXPORT CUresult cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *numBlocks, CUfunction func,
                                                                                 int blockSize, size_t dynamicSMemSize,
                                                                                 unsigned int flags)
{ return FWD("cuOccupancyMaxActiveBlocksPerMultiprocessor", U(numBlocks), U(func), (uint64_t)(int64_t)blockSize, dynamicSMemSize); }

/* ------------------------------------------------------------------ streams, events, synchronisation */

CRICKET_DRV_EXPORT CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)
{ return FWD("cuStreamCreate", U(phStream), Flags); }
CRICKET_DRV_EXPORT CUresult cuStreamDestroy_v2(CUstream hStream)
{ return RELEASE("cuStreamDestroy", U(hStream)); }
CRICKET_DRV_EXPORT_PAIR(cuStreamSynchronize, cuStreamSynchronize_ptsz, (CUstream hStream), "cuStreamSynchronize", U(hStream))
CRICKET_DRV_EXPORT_PAIR(cuStreamQuery, cuStreamQuery_ptsz, (CUstream hStream), "cuStreamQuery", U(hStream))
CRICKET_DRV_EXPORT_PAIR(cuStreamWaitEvent, cuStreamWaitEvent_ptsz, (CUstream hStream, CUevent hEvent, unsigned int Flags),
          "cuStreamWaitEvent", U(hStream), U(hEvent))

CRICKET_DRV_EXPORT CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags)
{ return FWD("cuEventCreate", U(phEvent), Flags); }
CRICKET_DRV_EXPORT_PAIR(cuEventRecord, cuEventRecord_ptsz, (CUevent hEvent, CUstream hStream), "cuEventRecord", U(hEvent), U(hStream))
CRICKET_DRV_EXPORT_PAIR(cuEventRecordWithFlags, cuEventRecordWithFlags_ptsz, (CUevent hEvent, CUstream hStream, unsigned int flags),
          "cuEventRecord", U(hEvent), U(hStream))
CRICKET_DRV_EXPORT CUresult cuEventSynchronize(CUevent hEvent)
{ return FWD("cuEventSynchronize", U(hEvent)); }
CRICKET_DRV_EXPORT CUresult cuEventQuery(CUevent hEvent)
{ return FWD("cuEventQuery", U(hEvent)); }
CRICKET_DRV_EXPORT CUresult cuEventElapsedTime_v2(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{ return FWD("cuEventElapsedTime", U(pMilliseconds), U(hStart), U(hEnd)); }
CRICKET_DRV_EXPORT CUresult cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{ return FWD("cuEventElapsedTime", U(pMilliseconds), U(hStart), U(hEnd)); }
CRICKET_DRV_EXPORT CUresult cuEventDestroy_v2(CUevent hEvent)
{ return RELEASE("cuEventDestroy", U(hEvent)); }

CRICKET_DRV_EXPORT CUresult cuCtxSynchronize(void)
{ return forward("cuCtxSynchronize", NULL, 0); }
CRICKET_DRV_EXPORT CUresult cuCtxSetLimit(CUlimit limit, size_t value)
{ return FWD("cuCtxSetLimit", U(limit), U(value)); }
CRICKET_DRV_EXPORT CUresult cuCtxGetLimit(size_t *pvalue, CUlimit limit)
{ return FWD("cuCtxGetLimit", U(pvalue), U(limit)); }
CRICKET_DRV_EXPORT CUresult cuCtxSynchronize_v2(CUcontext ctx)
{ return forward("cuCtxSynchronize", NULL, 0); }

/* ------------------------------------------------------------------ primary context reset */

/* cudaDeviceReset: the session's memory, streams and events are freed on the server; modules and
 * libraries stay loaded (CUlibrary handles are context-independent and cudart keeps them). The
 * retain count is unchanged, as with NVIDIA's driver. */
CRICKET_DRV_EXPORT CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
    CUresult rc = cricket_drv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!cricket_drv_primary_context(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    return forward("cuDevicePrimaryCtxReset", NULL, 0);
}
CRICKET_DRV_EXPORT CUresult cuDevicePrimaryCtxReset(CUdevice dev)
{ return cuDevicePrimaryCtxReset_v2(dev); }

/* ------------------------------------------------------------------ pitched memory, 2D copies, registered memory */

CRICKET_DRV_EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes, size_t Height,
                                               unsigned int ElementSizeBytes)
{ return FWD("cuMemAllocPitch", U(dptr), U(pPitch), WidthInBytes, Height, ElementSizeBytes); }

CRICKET_DRV_EXPORT CUresult cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int Flags)
{ return FWD("cuMemHostRegister", U(p), bytesize, Flags); }
CRICKET_DRV_EXPORT CUresult cuMemHostUnregister(void *p)
{ return RELEASE("cuMemHostUnregister", U(p)); }

