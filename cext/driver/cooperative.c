/* Cooperative launches (cricket/client/cooperative.py): every block of the grid resident at once. */
#include <stdint.h>

#include "driver.h"

#define U(x) ((uint64_t)(uintptr_t)(x))

static CUresult launch_cooperative(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                                   unsigned int by, unsigned int bz, unsigned int shared, CUstream stream,
                                   void **kernelParams)
{
    return cricket_drv_forward("cuLaunchCooperativeKernel",
                               (const uint64_t[]){ U(f), gx, gy, gz, bx, by, bz, shared, U(stream), U(kernelParams) },
                               10);
}

CRICKET_DRV_EXPORT_PAIR_BODY(cuLaunchCooperativeKernel, cuLaunchCooperativeKernel_ptsz,
    (CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ, unsigned int blockDimX,
     unsigned int blockDimY, unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
     void **kernelParams),
    launch_cooperative(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream,
                       kernelParams))
