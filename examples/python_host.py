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


def worker(k: int, results: list) -> None:
    """Each Python thread: its own buffers, copies and a launch of the library's kernel."""
    xs = array.array("f", [float(k)] * 256)
    ys = array.array("f", [1.0] * 256)
    a, b = ctypes.c_void_p(), ctypes.c_void_p()
    size = ctypes.c_size_t(4 * 256)
    errs = [cudart.cudaMalloc(ctypes.byref(a), size), cudart.cudaMalloc(ctypes.byref(b), size),
            cudart.cudaMemcpy(a, xs.buffer_info()[0], size, 1), cudart.cudaMemcpy(b, ys.buffer_info()[0], size, 1),
            kernels.lib_saxpy(2.0, a, b, 256), cudart.cudaMemcpy(ys.buffer_info()[0], b, size, 2),
            cudart.cudaFree(a), cudart.cudaFree(b)]
    results.append(any(errs) or any(v != 2.0 * k + 1 for v in ys))


import threading  # noqa: E402

results: list = []
threads = [threading.Thread(target=worker, args=(k, results)) for k in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
bad += sum(results) + (len(results) != 4)
print(f"{'FAIL' if bad else 'PASS'}: Python host through ctypes ({count.value} device(s), 4 threads)")
sys.exit(1 if bad else 0)
