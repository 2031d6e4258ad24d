/* The runtime API of several devices and of cooperative launches: peers, PCI bus ids, stream
 * priorities (forwarded to cricket/client/peers.py, device_ids.py, stream_priorities.py,
 * cooperative.py; forward_call.h says how). */
#include <stddef.h>

#include "forward_call.h"

#define I(x) ((uint64_t)(int64_t)(x))

CRICKET_EXPORT cudaError_t cudaDeviceCanAccessPeer(int *canAccessPeer, int device, int peerDevice)
{ FORWARD(U(canAccessPeer), I(device), I(peerDevice)); }
CRICKET_EXPORT cudaError_t cudaDeviceEnablePeerAccess(int peerDevice, unsigned int flags)
{ FORWARD(I(peerDevice), flags); }
CRICKET_EXPORT cudaError_t cudaDeviceDisablePeerAccess(int peerDevice) { FORWARD(I(peerDevice)); }
CRICKET_EXPORT cudaError_t cudaDeviceGetP2PAttribute(int *value, enum cudaDeviceP2PAttr attr, int srcDevice,
                                                     int dstDevice)
{ FORWARD(U(value), I(attr), I(srcDevice), I(dstDevice)); }
CRICKET_EXPORT cudaError_t cudaMemcpyPeer(void *dst, int dstDevice, const void *src, int srcDevice, size_t count)
{ CALL_AS("cudaMemcpyPeerAsync", U(dst), I(dstDevice), U(src), I(srcDevice), count, 0, 1); }
CRICKET_EXPORT cudaError_t cudaMemcpyPeerAsync(void *dst, int dstDevice, const void *src, int srcDevice,
                                               size_t count, cudaStream_t stream)
{ CALL_AS("cudaMemcpyPeerAsync", U(dst), I(dstDevice), U(src), I(srcDevice), count, U(stream), 0); }

CRICKET_EXPORT cudaError_t cudaDeviceGetPCIBusId(char *pciBusId, int len, int device)
{ FORWARD(U(pciBusId), I(len), I(device)); }
CRICKET_EXPORT cudaError_t cudaDeviceGetByPCIBusId(int *device, const char *pciBusId)
{ FORWARD(U(device), U(pciBusId)); }

CRICKET_EXPORT cudaError_t cudaStreamGetPriority(cudaStream_t hStream, int *priority)
{ CALL_AS("cudaStreamGetPriority", U(hStream), U(priority)); }
CRICKET_EXPORT cudaError_t cudaStreamGetPriority_ptsz(cudaStream_t hStream, int *priority)
{ CALL_AS("cudaStreamGetPriority", PT(hStream), U(priority)); }

/* cricket/client/cooperative.py */
CRICKET_EXPORT cudaError_t cudaLaunchCooperativeKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args,
                                                       size_t sharedMem, cudaStream_t stream)
{ CALL_AS("cudaLaunchCooperativeKernel", U(func), DIM(gridDim), DIM(blockDim), U(args), sharedMem, U(stream)); }
CRICKET_EXPORT cudaError_t cudaLaunchCooperativeKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim,
                                                            void **args, size_t sharedMem, cudaStream_t stream)
{ CALL_AS("cudaLaunchCooperativeKernel", U(func), DIM(gridDim), DIM(blockDim), U(args), sharedMem, PT(stream)); }
