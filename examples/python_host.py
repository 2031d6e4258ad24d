"""A Python host using the CUDA runtime through ctypes: device memory, copies and the kernel of
libkernel_lib.so. Run it through `cricket run -- python examples/python_host.py [LIBDIR]`."""
import array
import ctypes
import sys
from pathlib import Path

libdir = Path(sys.argv[1] if len(sys.argv) > 1 else "build/examples")
cudart = ctypes.CDLL("libcudart.so.13")      # the cricket shim when run through cricket
kernels = ctypes.CDLL(str(libdir / "libkernel_lib.so"))

cudart.cudaGetErrorString.restype = ctypes.c_char_p
cudart.cudaMemcpy.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
cudart.cudaFree.argtypes = [ctypes.c_void_p]
kernels.lib_saxpy.argtypes = [ctypes.c_float, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int]


def check(err: int, what: str) -> None:
    if err:
        print(f"FAIL: {what}: {cudart.cudaGetErrorString(err).decode()}")
        sys.exit(1)


n = 1000
count = ctypes.c_int()
check(cudart.cudaGetDeviceCount(ctypes.byref(count)), "cudaGetDeviceCount")
x = array.array("f", range(n))
y = array.array("f", [1.0] * n)
dx, dy = ctypes.c_void_p(), ctypes.c_void_p()
nbytes = ctypes.c_size_t(4 * n)
check(cudart.cudaMalloc(ctypes.byref(dx), nbytes), "cudaMalloc")
check(cudart.cudaMalloc(ctypes.byref(dy), nbytes), "cudaMalloc")
check(cudart.cudaMemcpy(dx, x.buffer_info()[0], nbytes, 1), "cudaMemcpy H2D")
check(cudart.cudaMemcpy(dy, y.buffer_info()[0], nbytes, 1), "cudaMemcpy H2D")
check(kernels.lib_saxpy(3.0, dx, dy, n), "lib_saxpy")
check(cudart.cudaMemcpy(y.buffer_info()[0], dy, nbytes, 2), "cudaMemcpy D2H")
bad = sum(1 for i in range(n) if y[i] != 3.0 * i + 1)
check(cudart.cudaFree(dx), "cudaFree")
check(cudart.cudaFree(dy), "cudaFree")
print(f"{'FAIL' if bad else 'PASS'}: Python host through ctypes ({count.value} device(s))")
sys.exit(1 if bad else 0)
