// A shared library with its own static cudart (nvcc's default), standing in for CuPy or cuBLAS.
#include <cuda_runtime.h>
extern "C" int PART_NAME(int *count, int *greatest)
{
    int least;
    cudaError_t err = cudaGetDeviceCount(count);
    if (err == cudaSuccess)
        err = cudaDeviceGetStreamPriorityRange(&least, greatest);
    return (int)err;
}
