// Divergent control flow: per-lane loop trip counts, early return, if/else chains.
extern "C" __global__ void collatz(const unsigned *start, unsigned *steps, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned long long x = start[i];
    unsigned s = 0;
    while (x != 1 && s < 1000) {
        if (x & 1) x = 3 * x + 1; else x >>= 1;
        ++s;
    }
    steps[i] = s;
}

extern "C" __global__ void branchy(const int *in, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int v = in[i];
    int r;
    if (v < 0) r = -v * 3;
    else if (v % 3 == 0) { r = 0; for (int k = 0; k < (v & 15); ++k) r += k * v; }
    else if (v % 3 == 1) r = v ^ 0x55;
    else return;
    out[i] = r;
}
