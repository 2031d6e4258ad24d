// -rdc=true: the device function, plus a kernel the host never launches.
__device__ int helper(int x) { return x * 2 + 1; }

__global__ void rdc_kernel_b(float f, double *out) { out[0] = helper((int)f); }

__global__ void rdc_kernel_used(int *out) { out[0] = helper(1); }

extern "C" void rdc_launch_b(int *out) { rdc_kernel_used<<<1, 1>>>(out); }
