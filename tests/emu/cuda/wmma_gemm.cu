// The example's tiled tensor-core GEMM, for the emu tests and bench/emu.py.
#include "../../../examples/wmma_gemm.cuh"
