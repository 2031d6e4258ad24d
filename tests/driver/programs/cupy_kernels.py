"""CuPy with its defaults (CUB accelerator on; kernels compiled by NVRTC to PTX with
CUPY_COMPILE_WITH_PTX=1): an elementwise expression, an ElementwiseKernel, a ReductionKernel
(CuPy's own reduction code) and the reductions, scans and sorts users call, which CuPy routes
through CUB (its JIT-compiled block reductions, the device-wide kernels of its libcub, Thrust's
sort), each compared with NumPy on the same data. Prints one ``name True|False`` line per check.

The reductions, scans and sorts run on int32 and float64 (a 4-byte integer and an 8-byte float: the
radix sort's integer and float key paths, both widths); float32 runs through the elementwise and
reduction checks above. Each dtype of each routine is a kernel of its own, and on emu the cost of the
test is the kernels it loads, not the elements (issue 20): one element, one tile (1000) and several
blocks (20011, the device-wide reduce, scan and sort kernels) each pick other kernels."""
import numpy as np

import cupy as cp
from cupy._core import _accelerator

# CUB is CuPy's default accelerator on CUDA (ACCELERATOR_CUB == 1)
print("accelerators", _accelerator.get_routine_accelerators(), _accelerator.get_reduction_accelerators())
a = cp.arange(1000, dtype=cp.float32)
ref = np.arange(1000, dtype=np.float32)
print("elementwise", bool((cp.asnumpy(a * 2 + 1) == ref * 2 + 1).all()))
square = cp.ElementwiseKernel("float32 x", "float32 y", "y = x * x", "cricket_square")
print("kernel", bool((cp.asnumpy(square(a)) == ref * ref).all()))
l1 = cp.ReductionKernel("T x", "T y", "abs(x)", "a + b", "y = a", "0", "cricket_l1")
print("reduction_kernel", float(l1(a - 500)) == float(np.abs(ref - 500).sum()))
print("sum", float((a * 2 + 1).sum()), float((ref * 2 + 1).sum()))
print("max", float(a.max()), float(ref.max()))

CHECKS = {
    "sum": (cp.sum, np.sum), "max": (cp.max, np.max), "min": (cp.min, np.min),
    "argmax": (cp.argmax, np.argmax), "argmin": (cp.argmin, np.argmin),
    "cumsum": (cp.cumsum, np.cumsum), "mean": (cp.mean, np.mean),
    "sort": (cp.sort, np.sort),                                         # Thrust/CUB radix sort
    "argsort": (lambda x: cp.argsort(x, kind="stable"), lambda x: np.argsort(x, kind="stable")),
}
for dtype in (np.int32, np.float64):
    for n in (1, 1000, 20011):
        # small integers of both signs in a scrambled order: every partial sum is exact in float32,
        # so any summation order gives NumPy's result; ties resolve to the first index in both
        host = ((np.arange(n, dtype=np.int64) * 7919) % 1013 - 506).astype(dtype)
        dev = cp.asarray(host)
        for name, (ours, theirs) in CHECKS.items():
            got, want = cp.asnumpy(ours(dev)), theirs(host)
            ok = np.allclose(got, want, rtol=1e-6, atol=0) if name == "mean" else np.array_equal(got, want)
            print(f"{name}_{np.dtype(dtype).name}_{n}", bool(ok and got.shape == np.shape(want)))
