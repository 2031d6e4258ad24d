// A kernel reads one surface and writes another (uchar4 texels, x addressed in bytes), then a
// second kernel reads outside the surface with cudaBoundaryModeZero and cudaBoundaryModeClamp;
// the results are compared with the same operations done on the host.
#include <vector>
#include "check.h"

const int W = 37, H = 11;

__global__ void brighten(cudaSurfaceObject_t in, cudaSurfaceObject_t out)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x >= W)
        return;
    uchar4 v = surf2Dread<uchar4>(in, x * 4, y);
    uchar4 w = make_uchar4(v.x / 2 + 100, 255 - v.y, v.z ^ (unsigned char)x, (unsigned char)(x + 3 * y));
    surf2Dwrite(w, out, x * 4, y);
}

__global__ void edges(cudaSurfaceObject_t s, uchar4 *out)
{
    int k = threadIdx.x;
    int x = k * 9 - 20, y = k % 3 == 0 ? -1 : k;
    out[2 * k] = surf2Dread<uchar4>(s, x * 4, y, cudaBoundaryModeZero);
    out[2 * k + 1] = surf2Dread<uchar4>(s, x * 4, y, cudaBoundaryModeClamp);
}

static bool same(uchar4 a, uchar4 b) { return a.x == b.x && a.y == b.y && a.z == b.z && a.w == b.w; }

int main()
{
    std::vector<uchar4> img(W * H), want(W * H), got(W * H);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            uchar4 v = make_uchar4(x * 7 + y, 3 * y + x * x, x ^ y, 0);
            img[y * W + x] = v;
            want[y * W + x] = make_uchar4(v.x / 2 + 100, 255 - v.y, v.z ^ (unsigned char)x, (unsigned char)(x + 3 * y));
        }
    cudaChannelFormatDesc fmt = cudaCreateChannelDesc<uchar4>();
    cudaArray_t a, b;
    CHECK(cudaMallocArray(&a, &fmt, W, H, cudaArraySurfaceLoadStore));
    CHECK(cudaMallocArray(&b, &fmt, W, H, cudaArraySurfaceLoadStore));
    CHECK(cudaMemcpy2DToArray(a, 0, 0, img.data(), W * 4, W * 4, H, cudaMemcpyHostToDevice));
    cudaResourceDesc res = {};
    res.resType = cudaResourceTypeArray;
    res.res.array.array = a;
    cudaSurfaceObject_t sa, sb;
    CHECK(cudaCreateSurfaceObject(&sa, &res));
    res.res.array.array = b;
    CHECK(cudaCreateSurfaceObject(&sb, &res));
    brighten<<<dim3((W + 31) / 32, H), 32>>>(sa, sb);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy2DFromArray(got.data(), W * 4, b, 0, 0, W * 4, H, cudaMemcpyDeviceToHost));
    int wrong = 0;
    for (int k = 0; k < W * H; k++)
        wrong += !same(got[k], want[k]);
    int bad = report("surface read, modify, write", wrong);

    const int n = 8;
    uchar4 *d_out;
    std::vector<uchar4> e(2 * n);
    CHECK(cudaMalloc(&d_out, 2 * n * sizeof(uchar4)));
    edges<<<1, n>>>(sa, d_out);
    CHECK(cudaMemcpy(e.data(), d_out, 2 * n * sizeof(uchar4), cudaMemcpyDeviceToHost));
    wrong = 0;
    for (int k = 0; k < n; k++) {
        int x = k * 9 - 20, y = k % 3 == 0 ? -1 : k;
        bool inside = x >= 0 && x < W && y >= 0 && y < H;
        int cx = x < 0 ? 0 : x >= W ? W - 1 : x, cy = y < 0 ? 0 : y >= H ? H - 1 : y;
        wrong += !same(e[2 * k], inside ? img[y * W + x] : make_uchar4(0, 0, 0, 0));
        wrong += !same(e[2 * k + 1], img[cy * W + cx]);
    }
    bad |= report("out-of-range reads: zero and clamp", wrong);
    CHECK(cudaDestroySurfaceObject(sa));
    CHECK(cudaDestroySurfaceObject(sb));
    CHECK(cudaFreeArray(a));
    CHECK(cudaFreeArray(b));
    CHECK(cudaFree(d_out));
    return bad;
}
