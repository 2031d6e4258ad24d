// A shared library with a __managed__ variable: cricket refuses it at registration.
#include <cuda_runtime.h>

__managed__ int managed_counter;

__global__ void bump(void) { managed_counter++; }

extern "C" int managed_read(void) { return managed_counter; }
