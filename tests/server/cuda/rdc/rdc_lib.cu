// The other translation unit of the -rdc test program.
__device__ float add_one(float x)
{
    return x + 1.0f;
}
