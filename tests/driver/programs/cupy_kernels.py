"""CuPy (its embedded static cudart, kernels compiled by NVRTC to PTX with CUPY_COMPILE_WITH_PTX=1):
an elementwise expression, an ElementwiseKernel and a reduction. Prints one line each."""
import numpy as np

import cupy as cp

a = cp.arange(1000, dtype=cp.float32)
ref = np.arange(1000, dtype=np.float32)
print("elementwise", bool((cp.asnumpy(a * 2 + 1) == ref * 2 + 1).all()))
square = cp.ElementwiseKernel("float32 x", "float32 y", "y = x * x", "cricket_square")
print("kernel", bool((cp.asnumpy(square(a)) == ref * ref).all()))
print("sum", float((a * 2 + 1).sum()), float((ref * 2 + 1).sum()))
print("max", float(a.max()), float(ref.max()))
