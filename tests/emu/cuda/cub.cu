// CUB block- and warp-level primitives (shipped with CUDA): real library code, not hand-written PTX.
#include <cuda/functional>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cub/warp/warp_reduce.cuh>

extern "C" __global__ void cub_block_reduce_scan(const int *in, int *sums, int *scan)
{
    typedef cub::BlockReduce<int, 128> BR;
    typedef cub::BlockScan<int, 128> BS;
    __shared__ typename BR::TempStorage tr;
    __shared__ typename BS::TempStorage ts;
    int i = blockIdx.x * 128 + threadIdx.x;
    int v = in[i];
    int s = BR(tr).Sum(v);
    if (threadIdx.x == 0) sums[blockIdx.x] = s;
    int x;
    BS(ts).ExclusiveSum(v, x);
    scan[i] = x;
}

extern "C" __global__ void cub_radix_sort(const unsigned *in, unsigned *out)
{
    typedef cub::BlockRadixSort<unsigned, 128, 4> BRS;
    __shared__ typename BRS::TempStorage t;
    unsigned keys[4];
    for (int k = 0; k < 4; ++k) keys[k] = in[blockIdx.x * 512 + threadIdx.x * 4 + k];
    BRS(t).Sort(keys);
    for (int k = 0; k < 4; ++k) out[blockIdx.x * 512 + threadIdx.x * 4 + k] = keys[k];
}

extern "C" __global__ void cub_warp_max(const float *in, float *out)
{
    typedef cub::WarpReduce<float> WR;
    __shared__ typename WR::TempStorage t[4];
    int w = threadIdx.x / 32;
    float m = WR(t[w]).Reduce(in[blockIdx.x * 128 + threadIdx.x], ::cuda::maximum<>{});
    if (threadIdx.x % 32 == 0) out[blockIdx.x * 4 + w] = m;
}
