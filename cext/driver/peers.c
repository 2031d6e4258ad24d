/* Peers: access between two devices' memory, and copies between them.
 *
 * The checks of devices and contexts are here; whether a device's kernels can reach another's
 * memory, the link's attributes, and enabling or disabling access are the server's to answer
 * (cricket/client/peers_driver.py; the emu backend's devices of one session can). Copies between
 * devices work without peer access, as in CUDA: device pointers are unified addresses, so
 * cuMemcpyPeer is cuMemcpy. */
#include <stdint.h>

#include "driver.h"

#define U(x) ((uint64_t)(uintptr_t)(x))

static int device_exists(CUdevice dev)
{
    return dev >= 0 && dev < cricket_drv_snapshot()->device_count;
}

CRICKET_DRV_EXPORT CUresult cuDeviceCanAccessPeer(int *canAccessPeer, CUdevice dev, CUdevice peerDev)
{
    CUresult rc = cricket_drv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!canAccessPeer)
        return CUDA_ERROR_INVALID_VALUE;
    if (!device_exists(dev) || !device_exists(peerDev))
        return CUDA_ERROR_INVALID_DEVICE;
    return cricket_drv_client_call("cuDeviceCanAccessPeer",
                                   (const uint64_t[]){ U(canAccessPeer), (uint64_t)dev, (uint64_t)peerDev }, 3);
}

CRICKET_DRV_EXPORT CUresult cuDeviceGetP2PAttribute(int *value, CUdevice_P2PAttribute attrib, CUdevice srcDevice,
                                                    CUdevice dstDevice)
{
    CUresult rc = cricket_drv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!value || attrib < CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK
        || attrib > CU_DEVICE_P2P_ATTRIBUTE_ONLY_PARTIAL_NATIVE_ATOMIC_SUPPORTED)
        return CUDA_ERROR_INVALID_VALUE;
    if (!device_exists(srcDevice) || !device_exists(dstDevice) || srcDevice == dstDevice)
        return CUDA_ERROR_INVALID_DEVICE;
    return cricket_drv_client_call("cuDeviceGetP2PAttribute",
                                   (const uint64_t[]){ U(value), (uint64_t)attrib, (uint64_t)srcDevice,
                                                       (uint64_t)dstDevice }, 4);
}

/* The peer context's checks before enabling or disabling access between two devices. */
static CUresult peer_context(CUcontext peerContext)
{
    CUresult rc = cricket_drv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    CUcontext current = cricket_drv_current_context();
    if (!current)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (!peerContext || !cricket_drv_context_valid(peerContext))
        return CUDA_ERROR_INVALID_CONTEXT;
    if (peerContext->device == current->device)
        return CUDA_ERROR_INVALID_DEVICE;
    return CUDA_SUCCESS;
}

CRICKET_DRV_EXPORT CUresult cuCtxEnablePeerAccess(CUcontext peerContext, unsigned int Flags)
{
    if (Flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult rc = peer_context(peerContext);
    return rc != CUDA_SUCCESS ? rc : cricket_drv_forward("cuCtxEnablePeerAccess", (const uint64_t[]){
        (uint64_t)cricket_drv_current_context()->device, (uint64_t)peerContext->device }, 2);
}

CRICKET_DRV_EXPORT CUresult cuCtxDisablePeerAccess(CUcontext peerContext)
{
    CUresult rc = peer_context(peerContext);
    return rc != CUDA_SUCCESS ? rc : cricket_drv_forward("cuCtxDisablePeerAccess", (const uint64_t[]){
        (uint64_t)cricket_drv_current_context()->device, (uint64_t)peerContext->device }, 2);
}

static CUresult copy_peer(CUdeviceptr dst, CUcontext dstContext, CUdeviceptr src, CUcontext srcContext,
                          size_t count, CUstream stream, int is_async)
{
    CUresult rc = cricket_drv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (!cricket_drv_context_valid(dstContext) || !cricket_drv_context_valid(srcContext))
        return CUDA_ERROR_INVALID_CONTEXT;
    return cricket_drv_forward("cuMemcpyDtoD", (const uint64_t[]){ dst, src, count, U(stream), (uint64_t)is_async }, 5);
}

CRICKET_DRV_EXPORT_PAIR_BODY(cuMemcpyPeer, cuMemcpyPeer_ptds,
    (CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice, CUcontext srcContext, size_t ByteCount),
    copy_peer(dstDevice, dstContext, srcDevice, srcContext, ByteCount, NULL, 0))
CRICKET_DRV_EXPORT_PAIR_BODY(cuMemcpyPeerAsync, cuMemcpyPeerAsync_ptsz,
    (CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice, CUcontext srcContext, size_t ByteCount,
     CUstream hStream),
    copy_peer(dstDevice, dstContext, srcDevice, srcContext, ByteCount, hStream, 1))
