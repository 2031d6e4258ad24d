// CUDA's SIMD intrinsics on packed half-words and bytes (CUB's thread operators use __vmins2 and
// friends). nvcc lowers them to video instructions (vabsdiff4), to .s16x2/.u16x2 arithmetic (sm_90)
// or to plain integer code.
#define N_OPS 30

extern "C" __global__ void simd_intrinsics(const unsigned *a, const unsigned *b, unsigned *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    unsigned x = a[i], y = b[i];
    unsigned *o = out + N_OPS * i;
    o[0] = __vmins2(x, y);     o[1] = __vminu2(x, y);     o[2] = __vmaxs2(x, y);     o[3] = __vmaxu2(x, y);
    o[4] = __vadd2(x, y);      o[5] = __vsub2(x, y);      o[6] = __vaddss2(x, y);    o[7] = __vaddus2(x, y);
    o[8] = __vsubss2(x, y);    o[9] = __vsubus2(x, y);    o[10] = __vabsdiffs2(x, y); o[11] = __vabsdiffu2(x, y);
    o[12] = __vavgu2(x, y);    o[13] = __vhaddu2(x, y);   o[14] = __vcmpeq2(x, y);   o[15] = __vcmpges2(x, y);
    o[16] = __vsetgeu2(x, y);  o[17] = __vneg2(x);        o[18] = __vsads2(x, y);    o[19] = __vabsss2(x);
    o[20] = __vmins4(x, y);    o[21] = __vminu4(x, y);    o[22] = __vmaxs4(x, y);    o[23] = __vmaxu4(x, y);
    o[24] = __vadd4(x, y);     o[25] = __vsub4(x, y);     o[26] = __vabsdiffu4(x, y); o[27] = __vsadu4(x, y);
    o[28] = __vcmpgtu4(x, y);  o[29] = __vseteq4(x, y);
}
