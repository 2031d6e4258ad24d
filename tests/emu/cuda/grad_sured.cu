// tex.grad and sured kernels for tests/emu/test_emu_grad_sured.py (objects built by the test).
#include <cuda_runtime.h>

extern "C" __global__ void fetch_grad2d(cudaTextureObject_t t, float *out, const float *xs, const float *ys,
                                        const float4 *grads, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float4 g = grads[i];
        out[i] = tex2DGrad<float>(t, xs[i], ys[i], make_float2(g.x, g.y), make_float2(g.z, g.w));
    }
}

extern "C" __global__ void fetch_grad1d(cudaTextureObject_t t, float *out, const float *xs, const float *dx,
                                        const float *dy, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1DGrad<float>(t, xs[i], dx[i], dy[i]);
}

// Every thread adds its value at (xs[i], ys[i]) of an int surface: lanes collide on purpose.
extern "C" __global__ void sured_add2d(cudaSurfaceObject_t s, const int *xs, const int *ys, const int *vals,
                                       int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        asm volatile("sured.b.add.2d.s32.trap [%0, {%1, %2}], %3;" :: "l"(s), "r"(xs[i] * 4), "r"(ys[i]),
                     "r"(vals[i]) : "memory");
}

extern "C" __global__ void sured_minmax1d(cudaSurfaceObject_t s, const int *xs, const int *vals, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        asm volatile("sured.p.min.1d.b32.clamp [%0, {%1}], %2;" :: "l"(s), "r"(xs[i]), "r"(vals[i]) : "memory");
        asm volatile("sured.b.max.1d.s32.zero [%0, {%1}], %2;" :: "l"(s), "r"(xs[i] * 4 + 4), "r"(vals[i])
                     : "memory");
    }
}

extern "C" __global__ void sured_bits(cudaSurfaceObject_t s, const int *xs, const unsigned *vals, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        asm volatile("sured.b.or.1d.b32.trap [%0, {%1}], %2;" :: "l"(s), "r"(xs[i] * 4), "r"(vals[i]) : "memory");
        asm volatile("sured.b.and.1d.b32.trap [%0, {%1}], %2;" :: "l"(s), "r"(xs[i] * 4 + 4), "r"(~vals[i])
                     : "memory");
    }
}

extern "C" __global__ void sured_add64(cudaSurfaceObject_t s, const int *xs, const unsigned long long *vals, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        asm volatile("sured.b.add.1d.u64.trap [%0, {%1}], %2;" :: "l"(s), "r"(xs[i] * 8), "l"(vals[i]) : "memory");
}

extern "C" __global__ void fetch_grad_cube(cudaTextureObject_t t, float *out, const float4 *dirs, const float4 *dx,
                                           const float4 *dy, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = texCubemapGrad<float>(t, dirs[i].x, dirs[i].y, dirs[i].z, dx[i], dy[i]);
}
