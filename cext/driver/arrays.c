/* The driver's CUDA arrays, texture and surface objects, and copies that involve arrays, forwarded
 * to cricket.client.arrays_driver (which shares its tables with the runtime face). Descriptors are
 * flattened here into words, since only the headers know their layout.
 *
 * Copy words (entry "cuMemcpy3D"): dst array, dst pointer, dst pitch, dst rows per slice, dst x in
 * bytes, y, z, the same for the source, width in bytes, height, depth, the cudaMemcpyKind of the
 * pointer sides (4: from the addresses), stream, async. */
#include <stdint.h>
#include <string.h>

#include "driver.h"

#define U(x) ((uint64_t)(uintptr_t)(x))
#define FWD(name, ...) cricket_drv_forward(name, (const uint64_t[]){ __VA_ARGS__ }, \
                                           (int)(sizeof((const uint64_t[]){ __VA_ARGS__ }) / sizeof(uint64_t)))

CRICKET_DRV_EXPORT CUresult cuArrayCreate_v2(CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR *d)
{
    if (!pHandle || !d)
        return CUDA_ERROR_INVALID_VALUE;
    return FWD("cuArray3DCreate", U(pHandle), d->Width, d->Height, 0, (uint64_t)d->Format, d->NumChannels, 0);
}

CRICKET_DRV_EXPORT CUresult cuArray3DCreate_v2(CUarray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *d)
{
    if (!pHandle || !d)
        return CUDA_ERROR_INVALID_VALUE;
    return FWD("cuArray3DCreate", U(pHandle), d->Width, d->Height, d->Depth, (uint64_t)d->Format, d->NumChannels,
               d->Flags);
}

CRICKET_DRV_EXPORT CUresult cuArrayDestroy(CUarray hArray) { return FWD("cuArrayDestroy", U(hArray)); }

/* where: 0 host, 1 device (or an array), -1 unified (decided from the address) */
static CUresult copy_side(CUmemorytype type, const void *host, CUdeviceptr device, CUarray array, uint64_t *w,
                          int *where)
{
    switch (type) {
    case CU_MEMORYTYPE_HOST: w[1] = U(host); *where = 0; return CUDA_SUCCESS;
    case CU_MEMORYTYPE_DEVICE: w[1] = device; *where = 1; return CUDA_SUCCESS;
    case CU_MEMORYTYPE_UNIFIED: w[1] = device; *where = -1; return CUDA_SUCCESS;
    case CU_MEMORYTYPE_ARRAY:
        if (!array)
            return CUDA_ERROR_INVALID_VALUE;
        w[0] = U(array); *where = 1; return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
}

static CUresult copy_box(const uint64_t *dst, const uint64_t *src, int dst_where, int src_where, size_t width,
                         size_t height, size_t depth, CUstream stream, int is_async)
{
    uint64_t kind = src_where < 0 || dst_where < 0 ? 4 : (uint64_t)(src_where * 2 + dst_where);
    return FWD("cuMemcpy3D", dst[0], dst[1], dst[2], dst[3], dst[4], dst[5], dst[6], src[0], src[1], src[2], src[3],
               src[4], src[5], src[6], width, height, depth, kind, U(stream), (uint64_t)is_async);
}

static CUresult copy_3d(const CUDA_MEMCPY3D *c, CUstream stream, int is_async)
{
    if (!c)
        return CUDA_ERROR_INVALID_VALUE;
    if (c->srcLOD || c->dstLOD)
        return CUDA_ERROR_INVALID_VALUE;       /* reserved, must be zero */
    uint64_t d[7] = { 0, 0, c->dstPitch, c->dstHeight, c->dstXInBytes, c->dstY, c->dstZ };
    uint64_t s[7] = { 0, 0, c->srcPitch, c->srcHeight, c->srcXInBytes, c->srcY, c->srcZ };
    int dw, sw;
    CUresult rc = copy_side(c->dstMemoryType, c->dstHost, c->dstDevice, c->dstArray, d, &dw);
    if (rc == CUDA_SUCCESS)
        rc = copy_side(c->srcMemoryType, c->srcHost, c->srcDevice, c->srcArray, s, &sw);
    if (rc != CUDA_SUCCESS)
        return rc;
    return copy_box(d, s, dw, sw, c->WidthInBytes, c->Height, c->Depth, stream, is_async);
}

/* A 2D copy is a 3D copy of depth 1. */
CUresult cricket_drv_copy_2d_arrays(const CUDA_MEMCPY2D *c, CUstream stream, int is_async)
{
    CUDA_MEMCPY3D c3 = {
        .srcXInBytes = c->srcXInBytes, .srcY = c->srcY, .srcMemoryType = c->srcMemoryType,
        .srcHost = c->srcHost, .srcDevice = c->srcDevice, .srcArray = c->srcArray, .srcPitch = c->srcPitch,
        .srcHeight = c->Height,
        .dstXInBytes = c->dstXInBytes, .dstY = c->dstY, .dstMemoryType = c->dstMemoryType,
        .dstHost = c->dstHost, .dstDevice = c->dstDevice, .dstArray = c->dstArray, .dstPitch = c->dstPitch,
        .dstHeight = c->Height,
        .WidthInBytes = c->WidthInBytes, .Height = c->Height, .Depth = 1,
    };
    return copy_3d(&c3, stream, is_async);
}

CRICKET_DRV_EXPORT CUresult cuMemcpy3D_v2(const CUDA_MEMCPY3D *pCopy) { return copy_3d(pCopy, NULL, 0); }
CRICKET_DRV_EXPORT CUresult cuMemcpy3D_v2_ptds(const CUDA_MEMCPY3D *pCopy) { return copy_3d(pCopy, NULL, 0); }
CRICKET_DRV_EXPORT CUresult cuMemcpy3DAsync_v2(const CUDA_MEMCPY3D *pCopy, CUstream hStream)
{ return copy_3d(pCopy, hStream, 1); }
CRICKET_DRV_EXPORT CUresult cuMemcpy3DAsync_v2_ptsz(const CUDA_MEMCPY3D *pCopy, CUstream hStream)
{ return copy_3d(pCopy, hStream, 1); }

static uint64_t f32_word(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* words: type, array or pointer, CUarray_format | channels << 32, size in bytes or width, height,
 * pitch; 6..: address modes (3), filter, flags, 0, border (4, f32 bits), mipmap filter, bias, min
 * and max level clamps (f32 bits); word 20: a texture description was given */
static void resource_words(const CUDA_RESOURCE_DESC *r, uint64_t *w)
{
    w[0] = (uint64_t)r->resType;
    switch (r->resType) {
    case CU_RESOURCE_TYPE_ARRAY: w[1] = U(r->res.array.hArray); break;
    case CU_RESOURCE_TYPE_MIPMAPPED_ARRAY: w[1] = U(r->res.mipmap.hMipmappedArray); break;
    case CU_RESOURCE_TYPE_LINEAR:
        w[1] = r->res.linear.devPtr;
        w[2] = (uint64_t)r->res.linear.format | (uint64_t)r->res.linear.numChannels << 32;
        w[3] = r->res.linear.sizeInBytes;
        break;
    case CU_RESOURCE_TYPE_PITCH2D:
        w[1] = r->res.pitch2D.devPtr;
        w[2] = (uint64_t)r->res.pitch2D.format | (uint64_t)r->res.pitch2D.numChannels << 32;
        w[3] = r->res.pitch2D.width; w[4] = r->res.pitch2D.height; w[5] = r->res.pitch2D.pitchInBytes;
        break;
    default: break;
    }
}

CRICKET_DRV_EXPORT CUresult cuTexObjectCreate(CUtexObject *pTexObject, const CUDA_RESOURCE_DESC *pResDesc,
                                              const CUDA_TEXTURE_DESC *pTexDesc,
                                              const CUDA_RESOURCE_VIEW_DESC *pResViewDesc)
{
    if (!pTexObject || !pResDesc || !pTexDesc)
        return CUDA_ERROR_INVALID_VALUE;
    if (pResViewDesc)
        return CUDA_ERROR_NOT_SUPPORTED;
    uint64_t w[21] = { 0 };
    resource_words(pResDesc, w);
    for (int k = 0; k < 3; k++)
        w[6 + k] = (uint64_t)pTexDesc->addressMode[k];
    w[9] = (uint64_t)pTexDesc->filterMode;
    w[10] = pTexDesc->flags;
    for (int k = 0; k < 4; k++)
        w[12 + k] = f32_word(pTexDesc->borderColor[k]);
    w[16] = (uint64_t)pTexDesc->mipmapFilterMode;
    w[17] = f32_word(pTexDesc->mipmapLevelBias);
    w[18] = f32_word(pTexDesc->minMipmapLevelClamp);
    w[19] = f32_word(pTexDesc->maxMipmapLevelClamp);
    w[20] = 1;
    return FWD("cuTexObjectCreate", U(pTexObject), U(w));
}

CRICKET_DRV_EXPORT CUresult cuSurfObjectCreate(CUsurfObject *pSurfObject, const CUDA_RESOURCE_DESC *pResDesc)
{
    if (!pSurfObject || !pResDesc)
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t w[21] = { 0 };
    resource_words(pResDesc, w);
    return FWD("cuTexObjectCreate", U(pSurfObject), U(w));
}

CRICKET_DRV_EXPORT CUresult cuTexObjectDestroy(CUtexObject texObject) { return FWD("cuTexObjectDestroy", texObject); }
CRICKET_DRV_EXPORT CUresult cuSurfObjectDestroy(CUsurfObject surfObject)
{ return FWD("cuTexObjectDestroy", surfObject); }

CRICKET_DRV_EXPORT CUresult cuArray3DGetDescriptor_v2(CUDA_ARRAY3D_DESCRIPTOR *d, CUarray hArray)
{
    if (!d)
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t w[6] = { 0 };      /* width, height, depth, CUarray_format, channels, flags */
    CUresult rc = FWD("cuArray3DGetDescriptor", U(w), U(hArray));
    if (rc != CUDA_SUCCESS)
        return rc;
    d->Width = w[0];
    d->Height = w[1];
    d->Depth = w[2];
    d->Format = (CUarray_format)w[3];
    d->NumChannels = (unsigned)w[4];
    d->Flags = (unsigned)w[5];
    return CUDA_SUCCESS;
}

CRICKET_DRV_EXPORT CUresult cuArrayGetDescriptor_v2(CUDA_ARRAY_DESCRIPTOR *d, CUarray hArray)
{
    if (!d)
        return CUDA_ERROR_INVALID_VALUE;
    CUDA_ARRAY3D_DESCRIPTOR d3;
    CUresult rc = cuArray3DGetDescriptor_v2(&d3, hArray);
    if (rc != CUDA_SUCCESS)
        return rc;
    d->Width = d3.Width;
    d->Height = d3.Height;
    d->Format = d3.Format;
    d->NumChannels = d3.NumChannels;
    return CUDA_SUCCESS;
}

/* words: as resource_words() writes them */
static CUresult object_resource_desc(CUDA_RESOURCE_DESC *out, uint64_t object)
{
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t w[6] = { 0 };
    CUresult rc = FWD("cuTexObjectGetResourceDesc", U(w), object);
    if (rc != CUDA_SUCCESS)
        return rc;
    memset(out, 0, sizeof *out);
    out->resType = (CUresourcetype)w[0];
    switch (out->resType) {
    case CU_RESOURCE_TYPE_ARRAY: out->res.array.hArray = (CUarray)(uintptr_t)w[1]; break;
    case CU_RESOURCE_TYPE_MIPMAPPED_ARRAY: out->res.mipmap.hMipmappedArray = (CUmipmappedArray)(uintptr_t)w[1]; break;
    case CU_RESOURCE_TYPE_LINEAR:
        out->res.linear.devPtr = w[1];
        out->res.linear.format = (CUarray_format)(w[2] & 0xFFFFFFFF);
        out->res.linear.numChannels = (unsigned)(w[2] >> 32);
        out->res.linear.sizeInBytes = w[3];
        break;
    case CU_RESOURCE_TYPE_PITCH2D:
        out->res.pitch2D.devPtr = w[1];
        out->res.pitch2D.format = (CUarray_format)(w[2] & 0xFFFFFFFF);
        out->res.pitch2D.numChannels = (unsigned)(w[2] >> 32);
        out->res.pitch2D.width = w[3]; out->res.pitch2D.height = w[4]; out->res.pitch2D.pitchInBytes = w[5];
        break;
    default: break;
    }
    return CUDA_SUCCESS;
}

CRICKET_DRV_EXPORT CUresult cuTexObjectGetResourceDesc(CUDA_RESOURCE_DESC *pResDesc, CUtexObject texObject)
{ return object_resource_desc(pResDesc, texObject); }
CRICKET_DRV_EXPORT CUresult cuSurfObjectGetResourceDesc(CUDA_RESOURCE_DESC *pResDesc, CUsurfObject surfObject)
{ return object_resource_desc(pResDesc, surfObject); }

/* ------------------------------------------------------------------ 2D copies, with or without arrays */

/* One side of a 2D copy: its start address and its cudaMemcpyKind half (0 host, 1 device, -1
 * unified: the client classifies the address). Arrays: cricket_drv_copy_2d_arrays. */
static CUresult linear_side(CUmemorytype type, const void *host, CUdeviceptr device, size_t x, size_t y,
                          size_t pitch, uint64_t *addr, int *where)
{
    switch (type) {
    case CU_MEMORYTYPE_HOST:
        *addr = U(host) + y * pitch + x;
        *where = 0;
        return CUDA_SUCCESS;
    case CU_MEMORYTYPE_DEVICE:
        *addr = device + y * pitch + x;
        *where = 1;
        return CUDA_SUCCESS;
    case CU_MEMORYTYPE_UNIFIED:
        *addr = device + y * pitch + x;
        *where = -1;
        return CUDA_SUCCESS;
    default:
        return CUDA_ERROR_NOT_SUPPORTED;
    }
}

static CUresult copy_2d(const CUDA_MEMCPY2D *c, CUstream stream, int is_async)
{
    if (!c)
        return CUDA_ERROR_INVALID_VALUE;
    if (c->srcMemoryType == CU_MEMORYTYPE_ARRAY || c->dstMemoryType == CU_MEMORYTYPE_ARRAY)
        return cricket_drv_copy_2d_arrays(c, stream, is_async);
    uint64_t src, dst;
    int src_where, dst_where;
    CUresult rc = linear_side(c->srcMemoryType, c->srcHost, c->srcDevice, c->srcXInBytes, c->srcY, c->srcPitch,
                            &src, &src_where);
    if (rc == CUDA_SUCCESS)
        rc = linear_side(c->dstMemoryType, c->dstHost, c->dstDevice, c->dstXInBytes, c->dstY, c->dstPitch,
                       &dst, &dst_where);
    if (rc != CUDA_SUCCESS)
        return rc;
    /* cudaMemcpyKind: 0 H2H, 1 H2D, 2 D2H, 3 D2D, 4 from the addresses */
    uint64_t kind = src_where < 0 || dst_where < 0 ? 4 : (uint64_t)(src_where * 2 + dst_where);
    return FWD("cuMemcpy2D", dst, c->dstPitch, src, c->srcPitch, c->WidthInBytes, c->Height, kind,
               U(stream), (uint64_t)is_async);
}

CRICKET_DRV_EXPORT_PAIR_BODY(cuMemcpy2D_v2, cuMemcpy2D_v2_ptds, (const CUDA_MEMCPY2D *pCopy),
                             copy_2d(pCopy, NULL, 0))
CRICKET_DRV_EXPORT_PAIR_BODY(cuMemcpy2DUnaligned_v2, cuMemcpy2DUnaligned_v2_ptds, (const CUDA_MEMCPY2D *pCopy),
                             copy_2d(pCopy, NULL, 0))
CRICKET_DRV_EXPORT_PAIR_BODY(cuMemcpy2DAsync_v2, cuMemcpy2DAsync_v2_ptsz, (const CUDA_MEMCPY2D *pCopy, CUstream hStream),
                             copy_2d(pCopy, hStream, 1))
