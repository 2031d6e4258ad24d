// A shared library with one kernel, dlopen'ed by the wrapper-address tests.
__global__ void lib_kernel(double *out, long long n, char c) { out[threadIdx.x] = n + c; }

extern "C" void lib_launch(double *out) { lib_kernel<<<1, 1>>>(out, 1, 2); }
