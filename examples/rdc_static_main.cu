// Built with -rdc=true: two translation units (rdc_static_a.cu, rdc_static_b.cu) each define a
// static __global__ function `fill` and a static __device__ variable of the same names. Each
// unit's launches must run its own kernel and count in its own variable.
#include "check.h"

int run_a(int *x, int n);
int run_b(int *x, int n);

static int check_values(const int *d, int n, int want)
{
    int *h = new int[n], wrong = 0;
    CHECK(cudaMemcpy(h, d, n * sizeof(int), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++)
        wrong += h[i] != want;
    delete[] h;
    return wrong;
}

int main()
{
    const int n = 256;
    int *x, bad = 0;
    CHECK(cudaMalloc(&x, n * sizeof(int)));
    int count_a = run_a(x, n);
    CHECK(cudaGetLastError());
    bad |= report("the first unit's static kernel runs, counting in its own variable",
                  check_values(x, n, 1002) != 0 || count_a != 2);
    int count_b = run_b(x, n);
    CHECK(cudaGetLastError());
    bad |= report("the second unit's static kernel of the same name runs its own code",
                  check_values(x, n, 2002) != 0 || count_b != 2);
    count_a = run_a(x, n);
    bad |= report("the first unit's kernel again: its variable is not the other unit's",
                  check_values(x, n, 1004) != 0 || count_a != 4);
    return report("static kernels of one name in two -rdc units", bad);
}
