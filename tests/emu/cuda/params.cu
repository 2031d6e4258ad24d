// Struct-by-value parameters and templates.
struct Params {
    double scale;
    float bias;
    int count;
    short small;
    signed char tiny;
    long long offset;
    unsigned short pair[2];
};

extern "C" __global__ void struct_param(Params p, long long *out)
{
    int i = threadIdx.x;
    out[i] = (long long)(p.scale * i) + (long long)p.bias + p.count * i + p.small + p.tiny + p.offset
             + p.pair[0] * 3 + p.pair[1];
}

template <typename T>
__global__ void scale_add(const T *in, T *out, T factor, T addend, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] * factor + addend;
}

template __global__ void scale_add<float>(const float *, float *, float, float, int);
template __global__ void scale_add<int>(const int *, int *, int, int, int);
template __global__ void scale_add<double>(const double *, double *, double, double, int);
