// Histograms with atomics: shared-memory bins merged into global, and global-only.
extern "C" __global__ void histogram_shared(const unsigned char *data, unsigned *hist, int n)
{
    __shared__ unsigned bins[256];
    for (int b = threadIdx.x; b < 256; b += blockDim.x) bins[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&bins[data[i]], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < 256; b += blockDim.x)
        if (bins[b]) atomicAdd(&hist[b], bins[b]);
}

extern "C" __global__ void histogram_global(const int *data, unsigned *hist, int nbins, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&hist[((data[i] % nbins) + nbins) % nbins], 1u);
}

// Every atomic flavour with returned values recorded.
extern "C" __global__ void atomics_mix(int *ctr, unsigned *umax, int *imin, double *dsum,
                                       unsigned *wrap, unsigned *bits, int *cas_slot, int *tickets)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tickets[i] = atomicAdd(ctr, 1);
    atomicMax(umax, (unsigned)(i * 7919u % 1000u));
    atomicMin(imin, 500 - i);
    atomicAdd(dsum, 0.5 * i);
    atomicInc(wrap, 9u);
    atomicOr(bits, 1u << (i & 31));
    atomicAnd(bits + 1, ~(1u << (i & 31)));
    atomicXor(bits + 2, (unsigned)i);
    int old = atomicCAS(cas_slot, i - 1, i);
    (void)old;
}
