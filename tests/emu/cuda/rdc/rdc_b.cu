// Separate compilation, part B: the definitions part A uses.
__device__ int rdc_scale = 3;
__device__ float rdc_combine(float a, float b) { return a * 2.0f + b; }
