// A kernel that fails in the way asked: `assert` (thread 3 fails a device assertion) or `address`
// (every thread writes far past its allocation). Prints the error the synchronising call and the
// next call return; exits 0 when both report the fault.
#include <cassert>
#include <cstdio>
#include <cstring>

namespace faults {
template <typename T> __global__ void check_positive(const T *v)
{
    assert(v[threadIdx.x] >= 0);
}

template <typename T> __global__ void write_far(T *p)
{
    p[(blockIdx.x * blockDim.x + threadIdx.x) * 4096] = 1;
}
}  // namespace faults

int main(int argc, char **argv)
{
    int *d = nullptr;
    cudaMalloc(&d, 64 * sizeof(int));
    if (argc > 1 && !strcmp(argv[1], "assert")) {
        int h[64];
        for (int i = 0; i < 64; i++) h[i] = i == 3 ? -1 : i;
        cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
        faults::check_positive<int><<<1, 64>>>(d);
    } else {
        faults::write_far<int><<<2, 64>>>(d);
    }
    cudaError_t sync = cudaDeviceSynchronize();
    cudaError_t next = cudaMemset(d, 0, 4);
    printf("sync: %s\nnext: %s\n", cudaGetErrorName(sync), cudaGetErrorName(next));
    return sync != cudaSuccess && next == sync ? 0 : 1;
}
