// A 2D float texture on a CUDA array, sampled with linear filtering and normalized coordinates
// under clamp and under wrap, and with point sampling at unnormalized coordinates; every sample
// is compared with the texture-fetching formulas of the CUDA programming guide computed on the
// host (linear weights in 9-bit fixed point with 8 fractional bits).
#include <cmath>
#include <vector>
#include "check.h"

const int W = 13, H = 7, N = 256;

__global__ void sample(cudaTextureObject_t tex, const float2 *at, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = tex2D<float>(tex, at[i].x, at[i].y);
}

static float texel(const std::vector<float> &img, int i, int j, bool wrap)
{
    if (wrap) {
        i = ((i % W) + W) % W;
        j = ((j % H) + H) % H;
    } else {
        i = i < 0 ? 0 : i >= W ? W - 1 : i;
        j = j < 0 ? 0 : j >= H ? H - 1 : j;
    }
    return img[j * W + i];
}

static float host_linear(const std::vector<float> &img, float x, float y, bool wrap)
{
    float xb = x * W - 0.5f, yb = y * H - 0.5f;
    int i = (int)floorf(xb), j = (int)floorf(yb);
    float a = rintf((xb - i) * 256.0f) / 256.0f, b = rintf((yb - j) * 256.0f) / 256.0f;
    return (1 - a) * (1 - b) * texel(img, i, j, wrap) + a * (1 - b) * texel(img, i + 1, j, wrap) +
           (1 - a) * b * texel(img, i, j + 1, wrap) + a * b * texel(img, i + 1, j + 1, wrap);
}

static cudaTextureObject_t make_texture(cudaArray_t arr, cudaTextureAddressMode mode, cudaTextureFilterMode filter,
                                        int normalized)
{
    cudaResourceDesc res = {};
    res.resType = cudaResourceTypeArray;
    res.res.array.array = arr;
    cudaTextureDesc td = {};
    td.addressMode[0] = td.addressMode[1] = mode;
    td.filterMode = filter;
    td.readMode = cudaReadModeElementType;
    td.normalizedCoords = normalized;
    cudaTextureObject_t t = 0;
    CHECK(cudaCreateTextureObject(&t, &res, &td, nullptr));
    return t;
}

static int run(cudaTextureObject_t t, const std::vector<float2> &at, std::vector<float> &got)
{
    float2 *d_at;
    float *d_out;
    CHECK(cudaMalloc(&d_at, N * sizeof(float2)));
    CHECK(cudaMalloc(&d_out, N * sizeof(float)));
    CHECK(cudaMemcpy(d_at, at.data(), N * sizeof(float2), cudaMemcpyHostToDevice));
    sample<<<(N + 127) / 128, 128>>>(t, d_at, d_out, N);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(got.data(), d_out, N * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK(cudaFree(d_at));
    CHECK(cudaFree(d_out));
    return 0;
}

int main()
{
    std::vector<float> img(W * H);
    for (int k = 0; k < W * H; k++)
        img[k] = sinf(0.7f * k) * 10.0f + (k % 5);
    cudaChannelFormatDesc fmt = cudaCreateChannelDesc<float>();
    cudaArray_t arr;
    CHECK(cudaMallocArray(&arr, &fmt, W, H));
    CHECK(cudaMemcpy2DToArray(arr, 0, 0, img.data(), W * sizeof(float), W * sizeof(float), H,
                              cudaMemcpyHostToDevice));

    std::vector<float2> at(N);
    for (int i = 0; i < N; i++)
        at[i] = make_float2(-1.25f + 3.5f * ((i * 37) % N) / N, -0.75f + 2.5f * ((i * 91) % N) / N);
    std::vector<float> got(N);
    int bad = 0;
    for (int wrap = 0; wrap < 2; wrap++) {
        cudaTextureObject_t t = make_texture(arr, wrap ? cudaAddressModeWrap : cudaAddressModeClamp,
                                             cudaFilterModeLinear, 1);
        run(t, at, got);
        int wrong = 0;
        for (int i = 0; i < N; i++)
            wrong += fabsf(got[i] - host_linear(img, at[i].x, at[i].y, wrap)) > 1e-4f;
        bad |= report(wrap ? "linear filtering, normalized coordinates, wrap" :
                             "linear filtering, normalized coordinates, clamp", wrong);
        CHECK(cudaDestroyTextureObject(t));
    }

    cudaTextureObject_t point = make_texture(arr, cudaAddressModeClamp, cudaFilterModePoint, 0);
    std::vector<float2> px(N);
    for (int i = 0; i < N; i++)
        px[i] = make_float2(at[i].x * W, at[i].y * H);
    run(point, px, got);
    int wrong = 0;
    for (int i = 0; i < N; i++)
        wrong += got[i] != texel(img, (int)floorf(px[i].x), (int)floorf(px[i].y), false);
    bad |= report("point sampling, unnormalized coordinates, clamp", wrong);

    cudaResourceDesc back = {};
    CHECK(cudaGetTextureObjectResourceDesc(&back, point));
    bad |= report("the texture's resource is the array", back.resType != cudaResourceTypeArray ||
                                                          back.res.array.array != arr);
    std::vector<float> round(W * H);
    CHECK(cudaMemcpy2DFromArray(round.data(), W * sizeof(float), arr, 0, 0, W * sizeof(float), H,
                                cudaMemcpyDeviceToHost));
    bad |= report("the array reads back", round != img);
    CHECK(cudaDestroyTextureObject(point));
    CHECK(cudaFreeArray(arr));
    return bad;
}
