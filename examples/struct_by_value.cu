// A struct passed to a kernel by value (with padding between its members).
#include "check.h"

struct Params {
    char tag;
    double scale;
    int offset;
    float bias[3];
};

__global__ void apply(Params p, const int *in, double *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = p.tag == 'p' ? (in[i] + p.offset) * p.scale + p.bias[i % 3] : -1;
}

int main()
{
    const int n = 300;
    int in[n];
    double out[n];
    for (int i = 0; i < n; i++) in[i] = i;
    Params p = {'p', 0.5, 7, {1.0f, 2.0f, 3.0f}};
    int *din; double *dout;
    CHECK(cudaMalloc(&din, sizeof in)); CHECK(cudaMalloc(&dout, sizeof out));
    CHECK(cudaMemcpy(din, in, sizeof in, cudaMemcpyDefault));
    apply<<<(n + 127) / 128, 128>>>(p, din, dout, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(out, dout, sizeof out, cudaMemcpyDefault));
    int bad = 0;
    for (int i = 0; i < n; i++)
        if (out[i] != (in[i] + p.offset) * p.scale + p.bias[i % 3]) bad++;
    return report("struct passed by value", bad);
}
