// Separate compilation: the kernel calls a device function of another translation unit.
extern __device__ float add_one(float x);

extern "C" __global__ void add_one_twice(float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] = add_one(add_one(x[i]));
}

int main() { return 0; }
