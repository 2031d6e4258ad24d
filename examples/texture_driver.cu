// CUDA arrays, textures and surfaces made with the driver API (cuArray3DCreate, cuMemcpy2D and
// cuMemcpy3D with arrays, cuTexObjectCreate, cuSurfObjectCreate) and used by kernels launched with
// <<<>>>: an 8-bit texture read as normalized floats (the driver's default for integer data) and
// as integers (CU_TRSF_READ_AS_INTEGER), and a 3D surface written by a kernel and read back.
#include <vector>
#include "check.h"
#include "driver_check.h"

const int W = 9, H = 6, D = 3;

__global__ void read_both(CUtexObject as_float, CUtexObject as_int, float *f, unsigned *u)
{
    int x = threadIdx.x, y = blockIdx.x;
    f[y * W + x] = tex2D<float>(as_float, x + 0.5f, y + 0.5f);
    u[y * W + x] = tex2D<unsigned char>(as_int, x + 0.5f, y + 0.5f);
}

__global__ void stamp(CUsurfObject s)
{
    int x = threadIdx.x, y = blockIdx.x, z = blockIdx.y;
    surf3Dwrite(x + 100 * y + 10000 * z, s, x * 4, y, z);
}

int main()
{
    DRV(cuInit(0));
    CUdevice dev;
    DRV(cuDeviceGet(&dev, 0));
    CUcontext ctx;
    DRV(cuDevicePrimaryCtxRetain(&ctx, dev));
    DRV(cuCtxSetCurrent(ctx));
    int bad = 0;

    std::vector<unsigned char> img(W * H);
    for (int k = 0; k < W * H; k++)
        img[k] = (unsigned char)(k * 37 + 11);
    CUDA_ARRAY_DESCRIPTOR ad = {};
    ad.Width = W;
    ad.Height = H;
    ad.Format = CU_AD_FORMAT_UNSIGNED_INT8;
    ad.NumChannels = 1;
    CUarray arr;
    DRV(cuArrayCreate(&arr, &ad));
    CUDA_MEMCPY2D c2 = {};
    c2.srcMemoryType = CU_MEMORYTYPE_HOST;
    c2.srcHost = img.data();
    c2.srcPitch = W;
    c2.dstMemoryType = CU_MEMORYTYPE_ARRAY;
    c2.dstArray = arr;
    c2.WidthInBytes = W;
    c2.Height = H;
    DRV(cuMemcpy2D(&c2));

    CUDA_RESOURCE_DESC rd = {};
    rd.resType = CU_RESOURCE_TYPE_ARRAY;
    rd.res.array.hArray = arr;
    CUDA_TEXTURE_DESC td = {};
    td.addressMode[0] = td.addressMode[1] = CU_TR_ADDRESS_MODE_CLAMP;
    td.filterMode = CU_TR_FILTER_MODE_POINT;
    CUtexObject tf, ti;
    DRV(cuTexObjectCreate(&tf, &rd, &td, nullptr));
    td.flags = CU_TRSF_READ_AS_INTEGER;
    DRV(cuTexObjectCreate(&ti, &rd, &td, nullptr));
    float *f;
    unsigned *u;
    DRV(cuMemAlloc((CUdeviceptr *)&f, W * H * sizeof(float)));
    DRV(cuMemAlloc((CUdeviceptr *)&u, W * H * sizeof(unsigned)));
    read_both<<<H, W>>>(tf, ti, f, u);
    DRV(cuCtxSynchronize());
    std::vector<float> hf(W * H);
    std::vector<unsigned> hu(W * H);
    DRV(cuMemcpyDtoH(hf.data(), (CUdeviceptr)f, W * H * sizeof(float)));
    DRV(cuMemcpyDtoH(hu.data(), (CUdeviceptr)u, W * H * sizeof(unsigned)));
    int wrong_f = 0, wrong_u = 0;
    for (int k = 0; k < W * H; k++) {
        wrong_f += hf[k] != img[k] / 255.0f;
        wrong_u += hu[k] != img[k];
    }
    bad |= report("8-bit texture read as normalized float", wrong_f);
    bad |= report("8-bit texture read as integer", wrong_u);

    CUDA_ARRAY3D_DESCRIPTOR a3 = {};
    a3.Width = W;
    a3.Height = H;
    a3.Depth = D;
    a3.Format = CU_AD_FORMAT_SIGNED_INT32;
    a3.NumChannels = 1;
    a3.Flags = CUDA_ARRAY3D_SURFACE_LDST;
    CUarray vol;
    DRV(cuArray3DCreate(&vol, &a3));
    rd.res.array.hArray = vol;
    CUsurfObject s;
    DRV(cuSurfObjectCreate(&s, &rd));
    stamp<<<dim3(H, D), W>>>(s);
    std::vector<int> back(W * H * D);
    CUDA_MEMCPY3D c3 = {};
    c3.srcMemoryType = CU_MEMORYTYPE_ARRAY;
    c3.srcArray = vol;
    c3.dstMemoryType = CU_MEMORYTYPE_HOST;
    c3.dstHost = back.data();
    c3.dstPitch = W * sizeof(int);
    c3.dstHeight = H;
    c3.WidthInBytes = W * sizeof(int);
    c3.Height = H;
    c3.Depth = D;
    DRV(cuMemcpy3D(&c3));
    int wrong = 0;
    for (int z = 0; z < D; z++)
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++)
                wrong += back[(z * H + y) * W + x] != x + 100 * y + 10000 * z;
    bad |= report("3D surface written by a kernel", wrong);

    DRV(cuTexObjectDestroy(tf));
    DRV(cuTexObjectDestroy(ti));
    DRV(cuSurfObjectDestroy(s));
    DRV(cuArrayDestroy(arr));
    DRV(cuArrayDestroy(vol));
    DRV(cuMemFree((CUdeviceptr)f));
    DRV(cuMemFree((CUdeviceptr)u));
    DRV(cuDevicePrimaryCtxRelease(dev));
    return bad;
}
