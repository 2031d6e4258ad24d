// Kernels whose parameter layouts the fatbin tests decode and check against
// these signatures. Keep in step with tests/fatbin/signatures.py.
#include <cstdint>

struct S24 { int a; double b; char c; };                // size 24, alignment 8
struct alignas(16) V16 { float x, y, z, w; };          // size 16, alignment 16
struct Big4000 { char bytes[4000]; };                  // size 4000, alignment 1
struct Big8192 { char bytes[8192]; };                  // pushes the total over 4352: V2 records

__device__ float g_dev_var[16];                        // 64 bytes in .nv.global
__constant__ float c_const[32];                        // 128 bytes in .nv.constant3
__device__ int g_dev_init = 42;                        // initialised: .nv.global.init

__global__ void k_types(char c, short s, int i, long long ll, float f, double d, int *p,
                        S24 s24, unsigned char uc, V16 v16)
{
    if (p) p[0] = c + s + i + (int)ll + (int)f + (int)d + s24.a + uc + (int)v16.x + (int)c_const[0];
}

__global__ void k_big(Big4000 b, int n) { g_dev_var[0] = b.bytes[n]; }

__global__ void k_huge(int n, Big8192 b, float *out) { out[0] = b.bytes[n] + g_dev_init; }

extern "C" __global__ void k_externc(int n, float *out) { out[n] = 1.0f; }

__global__ void k_noparams() { g_dev_var[1] = 2.0f; }

__global__ void __launch_bounds__(128) k_bounds(float *out) { out[threadIdx.x] = 3.0f; }

template <typename T, int N>
__global__ void k_tmpl(T *out, T v)
{
    __shared__ T tile[N];
    tile[threadIdx.x % N] = v;
    __syncthreads();
    out[threadIdx.x] = tile[(threadIdx.x + 1) % N];
}

template __global__ void k_tmpl<float, 64>(float *, float);
template __global__ void k_tmpl<double, 32>(double *, double);

// Host side: launches reference every kernel, so nvcc registers them all.
void launch_all(int *p, float *out, double *dout)
{
    S24 s{}; V16 v{}; Big4000 b4{}; Big8192 b8{};
    k_types<<<1, 1>>>(1, 2, 3, 4, 5.f, 6., p, s, 7, v);
    k_big<<<1, 1>>>(b4, 0);
    k_huge<<<1, 1>>>(0, b8, out);
    k_externc<<<1, 1>>>(0, out);
    k_noparams<<<1, 1>>>();
    k_bounds<<<1, 128>>>(out);
    k_tmpl<float, 64><<<1, 64>>>(out, 1.f);
    k_tmpl<double, 32><<<1, 32>>>(dout, 1.);
}
