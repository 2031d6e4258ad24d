// NVIDIA's occupancy calculator (cuda_occupancy.h, header-only host code) as an oracle: one case a
// line on stdin, "major minor maxThreadsPerBlock maxThreadsPerSM regsPerBlock regsPerSM warpSize
// sharedPerBlock sharedPerSM optin reserved | kernelMaxThreads numRegs staticShared maxDynamic |
// blockSize dynamicShared" (the bars are words of their own), one answer a line on stdout: the
// active blocks per multiprocessor, or "error N".
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <cuda_occupancy.h>

int main() {
    std::string bar;
    cudaOccDeviceProp p;
    cudaOccFuncAttributes a;
    cudaOccDeviceState s;
    long long blockSize, dynamicShared, sharedPerBlock, sharedPerSM, optin, reserved, staticShared, maxDynamic;
    while (std::cin >> p.computeMajor >> p.computeMinor >> p.maxThreadsPerBlock >> p.maxThreadsPerMultiprocessor
                    >> p.regsPerBlock >> p.regsPerMultiprocessor >> p.warpSize >> sharedPerBlock >> sharedPerSM
                    >> optin >> reserved >> bar >> a.maxThreadsPerBlock >> a.numRegs >> staticShared >> maxDynamic
                    >> bar >> blockSize >> dynamicShared) {
        p.sharedMemPerBlock = sharedPerBlock;
        p.sharedMemPerMultiprocessor = sharedPerSM;
        p.sharedMemPerBlockOptin = optin;
        p.reservedSharedMemPerBlock = reserved;
        p.numSms = 1;
        a.sharedSizeBytes = staticShared;
        a.maxDynamicSharedSizeBytes = maxDynamic;
        a.partitionedGCConfig = PARTITIONED_GC_OFF;
        a.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;     // as converted from cudaFuncAttributes
        a.numBlockBarriers = 1;
        a.virtualResourceCount = 0;
        cudaOccResult r;
        memset(&r, 0, sizeof r);
        cudaOccError e = cudaOccMaxActiveBlocksPerMultiprocessor(&r, &p, &a, &s, (int)blockSize, (size_t)dynamicShared);
        if (e != CUDA_OCC_SUCCESS)
            printf("error %d\n", (int)e);
        else
            printf("%d\n", r.activeBlocksPerMultiprocessor);
    }
    return 0;
}
