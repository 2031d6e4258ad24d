// Integer division and modulo with negative operands, 32 and 64 bit, signed and unsigned.
extern "C" __global__ void intdiv(const int *a, const int *b, int *q, int *r, unsigned *uq, unsigned *ur,
                                  long long *lq, long long *lr, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int x = a[i], y = b[i];
    q[i] = x / y;
    r[i] = x % y;
    uq[i] = (unsigned)x / (unsigned)y;
    ur[i] = (unsigned)x % (unsigned)y;
    long long X = (long long)x * 100003LL, Y = (long long)y;
    lq[i] = X / Y;
    lr[i] = X % Y;
}
