// Math library functions in float and double (inlined libdevice code: fma, ex2, lg2, tables).
extern "C" __global__ void math_f32(const float *x, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    out[8 * i + 0] = expf(v);
    out[8 * i + 1] = logf(fabsf(v) + 1e-3f);
    out[8 * i + 2] = sinf(v);
    out[8 * i + 3] = powf(fabsf(v), 1.7f);
    out[8 * i + 4] = sqrtf(fabsf(v));
    out[8 * i + 5] = tanhf(v);
    out[8 * i + 6] = cosf(v * 10.0f);
    out[8 * i + 7] = fminf(v, 0.25f) + floorf(v) + 1.0f / (v * v + 1.0f);
}

extern "C" __global__ void math_f64(const double *x, double *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double v = x[i];
    out[6 * i + 0] = exp(v);
    out[6 * i + 1] = log(fabs(v) + 1e-3);
    out[6 * i + 2] = sin(v);
    out[6 * i + 3] = pow(fabs(v), 1.7);
    out[6 * i + 4] = sqrt(fabs(v));
    out[6 * i + 5] = fmin(v, 0.25) + 1.0 / (v * v + 1.0);
}
