// A layered 2D texture and a 3D texture (both filled with cudaMemcpy3D), sampled with point and
// trilinear filtering; each sample is compared with the programming guide's formulas on the host.
#include <cmath>
#include <vector>
#include "check.h"

const int W = 6, H = 5, D = 4, N = 128;

__global__ void sample_layered(cudaTextureObject_t t, const float4 *at, float *out)
{
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    if (i < N)
        out[i] = tex2DLayered<float>(t, at[i].x, at[i].y, (int)at[i].z);
}

__global__ void sample_3d(cudaTextureObject_t t, const float4 *at, float *out)
{
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    if (i < N)
        out[i] = tex3D<float>(t, at[i].x, at[i].y, at[i].z);
}

static int clampi(int v, int n) { return v < 0 ? 0 : v >= n ? n - 1 : v; }

static cudaArray_t filled(const std::vector<float> &v, unsigned flags)
{
    cudaChannelFormatDesc fmt = cudaCreateChannelDesc<float>();
    cudaArray_t arr;
    CHECK(cudaMalloc3DArray(&arr, &fmt, make_cudaExtent(W, H, D), flags));
    cudaMemcpy3DParms p = {};
    p.srcPtr = make_cudaPitchedPtr((void *)v.data(), W * sizeof(float), W, H);
    p.dstArray = arr;
    p.extent = make_cudaExtent(W, H, D);
    p.kind = cudaMemcpyHostToDevice;
    CHECK(cudaMemcpy3D(&p));
    return arr;
}

static cudaTextureObject_t texture(cudaArray_t arr, cudaTextureFilterMode filter)
{
    cudaResourceDesc res = {};
    res.resType = cudaResourceTypeArray;
    res.res.array.array = arr;
    cudaTextureDesc td = {};
    td.addressMode[0] = td.addressMode[1] = td.addressMode[2] = cudaAddressModeClamp;
    td.filterMode = filter;
    cudaTextureObject_t t;
    CHECK(cudaCreateTextureObject(&t, &res, &td, nullptr));
    return t;
}

static void run(void (*kernel)(cudaTextureObject_t, const float4 *, float *), cudaTextureObject_t t,
                const std::vector<float4> &at, std::vector<float> &got)
{
    float4 *d_at;
    float *d_out;
    CHECK(cudaMalloc(&d_at, N * sizeof(float4)));
    CHECK(cudaMalloc(&d_out, N * sizeof(float)));
    CHECK(cudaMemcpy(d_at, at.data(), N * sizeof(float4), cudaMemcpyHostToDevice));
    kernel<<<1, N>>>(t, d_at, d_out);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(got.data(), d_out, N * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK(cudaFree(d_at));
    CHECK(cudaFree(d_out));
}

int main()
{
    std::vector<float> v(W * H * D);
    for (int k = 0; k < W * H * D; k++)
        v[k] = cosf(0.3f * k) * 4.0f + k % 7;
    std::vector<float4> at(N);
    for (int i = 0; i < N; i++)
        at[i] = make_float4(-0.5f + 7.0f * ((i * 29) % N) / N, -0.5f + 6.0f * ((i * 53) % N) / N,
                            -0.5f + 5.0f * ((i * 71) % N) / N, 0);
    std::vector<float> got(N);
    int bad = 0;

    cudaArray_t layered = filled(v, cudaArrayLayered);
    cudaTextureObject_t tl = texture(layered, cudaFilterModePoint);
    run(sample_layered, tl, at, got);
    int wrong = 0;
    for (int i = 0; i < N; i++) {
        int layer = clampi((int)at[i].z, D);
        wrong += got[i] != v[(layer * H + clampi((int)floorf(at[i].y), H)) * W + clampi((int)floorf(at[i].x), W)];
    }
    bad |= report("layered 2D texture, point sampling", wrong);

    cudaArray_t vol = filled(v, 0);
    cudaTextureObject_t t3 = texture(vol, cudaFilterModeLinear);
    run(sample_3d, t3, at, got);
    wrong = 0;
    for (int i = 0; i < N; i++) {
        float c[3] = { at[i].x - 0.5f, at[i].y - 0.5f, at[i].z - 0.5f };
        int b[3];
        float w[3];
        for (int k = 0; k < 3; k++) {
            b[k] = (int)floorf(c[k]);
            w[k] = rintf((c[k] - b[k]) * 256.0f) / 256.0f;
        }
        float want = 0;
        for (int dz = 0; dz < 2; dz++)
            for (int dy = 0; dy < 2; dy++)
                for (int dx = 0; dx < 2; dx++) {
                    float wt = (dx ? w[0] : 1 - w[0]) * (dy ? w[1] : 1 - w[1]) * (dz ? w[2] : 1 - w[2]);
                    want += wt * v[(clampi(b[2] + dz, D) * H + clampi(b[1] + dy, H)) * W + clampi(b[0] + dx, W)];
                }
        wrong += fabsf(got[i] - want) > 1e-4f;
    }
    bad |= report("3D texture, trilinear filtering", wrong);
    CHECK(cudaDestroyTextureObject(tl));
    CHECK(cudaDestroyTextureObject(t3));
    CHECK(cudaFreeArray(layered));
    CHECK(cudaFreeArray(vol));
    return bad;
}
