// One template kernel instantiated for three types.
#include "check.h"

template <typename T>
__global__ void axpy(T a, const T *x, T *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

template <typename T>
static int run(T a)
{
    const int n = 200;
    T x[n], y[n];
    for (int i = 0; i < n; i++) { x[i] = (T)i; y[i] = (T)(n - i); }
    T *dx, *dy;
    CHECK(cudaMalloc(&dx, sizeof x)); CHECK(cudaMalloc(&dy, sizeof y));
    CHECK(cudaMemcpy(dx, x, sizeof x, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dy, y, sizeof y, cudaMemcpyHostToDevice));
    axpy<T><<<(n + 63) / 64, 64>>>(a, dx, dy, n);
    CHECK(cudaMemcpy(y, dy, sizeof y, cudaMemcpyDeviceToHost));
    CHECK(cudaFree(dx)); CHECK(cudaFree(dy));
    int bad = 0;
    for (int i = 0; i < n; i++)
        if (y[i] != (T)(a * (T)i + (T)(n - i))) bad++;
    return bad;
}

int main()
{
    int bad = run<int>(3) + run<float>(1.5f) + run<double>(-2.25);
    return report("template kernel for int, float and double", bad);
}
