// -rdc=true: a kernel calling a __device__ function defined in rdc_b.cu.
__device__ int helper(int x);

__global__ void rdc_kernel(int *out, int n) { out[threadIdx.x] = helper(n); }

extern "C" void rdc_launch_a(int *out) { rdc_kernel<<<1, 1>>>(out, 3); }
