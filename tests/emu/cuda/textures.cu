// Texture and surface kernels for tests/emu/test_emu_textures.py (objects built by the test).
#include <cuda_runtime.h>

extern "C" __global__ void fetch2d(cudaTextureObject_t t, float4 *out, const float *xs, const float *ys, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2D<float4>(t, xs[i], ys[i]);
}

extern "C" __global__ void fetch2d_scalar(cudaTextureObject_t t, float *out, const float *xs, const float *ys, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2D<float>(t, xs[i], ys[i]);
}

extern "C" __global__ void fetch1d_linear(cudaTextureObject_t t, int *out, int n, int shift) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1Dfetch<int>(t, i + shift);
}

extern "C" __global__ void fetch3d(cudaTextureObject_t t, float *out, const float *xs, const float *ys,
                                   const float *zs, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex3D<float>(t, xs[i], ys[i], zs[i]);
}

extern "C" __global__ void fetch_layered(cudaTextureObject_t t, float *out, const float *xs, const float *ys,
                                         const int *layers, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2DLayered<float>(t, xs[i], ys[i], layers[i]);
}

extern "C" __global__ void fetch_lod(cudaTextureObject_t t, float *out, const float *xs, const float *ys,
                                     const float *lods, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2DLod<float>(t, xs[i], ys[i], lods[i]);
}

extern "C" __global__ void gather(cudaTextureObject_t t, float4 *out, const float *xs, const float *ys, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2Dgather<float4>(t, xs[i], ys[i], 1);
}

extern "C" __global__ void surf_bump(cudaSurfaceObject_t src, cudaSurfaceObject_t dst, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x < w && y < h) {
        uchar4 v = surf2Dread<uchar4>(src, x * 4, y);
        v.x += 1; v.w = (unsigned char)(x + y);
        surf2Dwrite(v, dst, x * 4, y);
    }
}

extern "C" __global__ void surf_edges(cudaSurfaceObject_t s, float *out, int x, int y) {
    out[0] = surf2Dread<float>(s, x * 4, y, cudaBoundaryModeZero);
    out[1] = surf2Dread<float>(s, x * 4, y, cudaBoundaryModeClamp);
}

extern "C" __global__ void surf_trap(cudaSurfaceObject_t s, int x) {
    surf1Dwrite(1.0f, s, x * 4);
}

extern "C" __global__ void queries(cudaTextureObject_t t, cudaSurfaceObject_t s, unsigned *out) {
    unsigned a, b, c, d, e;
    asm("txq.width.b32 %0, [%1];" : "=r"(a) : "l"(t));
    asm("txq.height.b32 %0, [%1];" : "=r"(b) : "l"(t));
    asm("txq.num_mipmap_levels.b32 %0, [%1];" : "=r"(c) : "l"(t));
    asm("suq.width.b32 %0, [%1];" : "=r"(d) : "l"(s));
    asm("{ .reg .pred p; istypep.texref p, %1; selp.u32 %0, 1, 0, p; }" : "=r"(e) : "l"(t));
    unsigned f;
    asm("{ .reg .pred p; istypep.texref p, %1; selp.u32 %0, 1, 0, p; }" : "=r"(f) : "l"(s));
    out[0] = a; out[1] = b; out[2] = c; out[3] = d; out[4] = e; out[5] = f;
}

extern "C" __global__ void fetch_cube(cudaTextureObject_t t, float *out, const float *xs, const float *ys,
                                      const float *zs, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = texCubemap<float>(t, xs[i], ys[i], zs[i]);
}

extern "C" __global__ void surf_formatted(cudaSurfaceObject_t s, float v, int x, int y) {
    asm volatile("sust.p.2d.v4.b32.trap [%0, {%1, %2}], {%3, %3, %3, %3};" :: "l"(s), "r"(x), "r"(y),
                 "r"(__float_as_uint(v)));
}
