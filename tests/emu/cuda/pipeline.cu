// Asynchronous global->shared copies (cp.async on sm_80) and cooperative-group block sync.
#include <cuda_pipeline.h>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void async_copy_reverse(const int *in, int *out)
{
    __shared__ int buf[128];
    int t = threadIdx.x;
    __pipeline_memcpy_async(&buf[t], &in[blockIdx.x * blockDim.x + t], sizeof(int));
    __pipeline_commit();
    __pipeline_wait_prior(0);
    cg::this_thread_block().sync();
    out[blockIdx.x * blockDim.x + t] = buf[blockDim.x - 1 - t];
}
