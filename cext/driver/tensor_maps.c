/* Tensor maps (TMA): cuTensorMapEncodeTiled and cuTensorMapReplaceAddress, forwarded with their
 * arrays' addresses to cricket/client/tensor_maps_driver.py, which writes the 128-byte map. The
 * im2col forms stay NOT_SUPPORTED stubs. */
#include <stdint.h>

#include "driver.h"

#define U(x) ((uint64_t)(uintptr_t)(x))

CRICKET_DRV_EXPORT CUresult cuTensorMapEncodeTiled(CUtensorMap *tensorMap, CUtensorMapDataType tensorDataType,
                                                   cuuint32_t tensorRank, void *globalAddress,
                                                   const cuuint64_t *globalDim, const cuuint64_t *globalStrides,
                                                   const cuuint32_t *boxDim, const cuuint32_t *elementStrides,
                                                   CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
                                                   CUtensorMapL2promotion l2Promotion,
                                                   CUtensorMapFloatOOBfill oobFill)
{
    const uint64_t w[] = { U(tensorMap), (uint64_t)tensorDataType, tensorRank, U(globalAddress), U(globalDim),
                           U(globalStrides), U(boxDim), U(elementStrides), (uint64_t)interleave, (uint64_t)swizzle,
                           (uint64_t)l2Promotion, (uint64_t)oobFill };
    return cricket_drv_forward("cuTensorMapEncodeTiled", w, (int)(sizeof w / sizeof w[0]));
}

CRICKET_DRV_EXPORT CUresult cuTensorMapReplaceAddress(CUtensorMap *tensorMap, void *globalAddress)
{
    const uint64_t w[] = { U(tensorMap), U(globalAddress) };
    return cricket_drv_forward("cuTensorMapReplaceAddress", w, 2);
}
