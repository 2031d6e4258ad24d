"""Driver-API vector add with cuda-python (cuda.bindings.driver): cuModuleLoadData with the image
file given on the command line (PTX, cubin or fatbin), kernelParams or an `extra` buffer, pinned
host memory and async copies. Prints one line per step and PASS or FAIL."""
import ctypes
import sys

import numpy as np
from cuda.bindings import driver as d

from cuda_python_checks import check


image_path, mode = sys.argv[1], sys.argv[2]
image = open(image_path, "rb").read()
if image_path.endswith(".ptx"):
    image += b"\0"
check(d.cuInit(0), "cuInit")
dev = check(d.cuDeviceGet(0), "cuDeviceGet")
ctx = check(d.cuDevicePrimaryCtxRetain(dev), "cuDevicePrimaryCtxRetain")
check(d.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
print("device", check(d.cuDeviceGetName(64, dev), "cuDeviceGetName").split(b"\0")[0].decode())
module = check(d.cuModuleLoadData(image), "cuModuleLoadData")
kernel = check(d.cuModuleGetFunction(module, b"vadd"), "cuModuleGetFunction")
n = 5000
a = np.arange(n, dtype=np.float32)
b = (np.arange(n, dtype=np.float32) * 3).astype(np.float32)
c = np.zeros(n, dtype=np.float32)
nbytes = a.nbytes
da, db, dc = (check(d.cuMemAlloc(nbytes), "cuMemAlloc") for _ in range(3))
attr = check(d.cuPointerGetAttribute(d.CUpointer_attribute.CU_POINTER_ATTRIBUTE_MEMORY_TYPE, da),
             "cuPointerGetAttribute")
print("memory type", int(attr))
stream = check(d.cuStreamCreate(0), "cuStreamCreate")
check(d.cuMemcpyHtoD(da, a.ctypes.data, nbytes), "cuMemcpyHtoD")
check(d.cuMemcpyHtoDAsync(db, b.ctypes.data, nbytes, stream), "cuMemcpyHtoDAsync")
check(d.cuMemsetD32(dc, 0x7F800000, n), "cuMemsetD32")       # +inf: overwritten by the kernel
grid, block = (n + 127) // 128, 128
if mode == "params":
    args = ((int(da), int(db), int(dc), n), (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int))
    check(d.cuLaunchKernel(kernel, grid, 1, 1, block, 1, 1, 0, stream, args, 0), "cuLaunchKernel")
else:
    buf = (ctypes.c_uint64 * 4)(int(da), int(db), int(dc), n)      # n in the low word, then padding
    size = ctypes.c_size_t(28)
    extra = (ctypes.c_void_p * 5)(1, ctypes.addressof(buf), 2, ctypes.addressof(size), 0)
    check(d.cuLaunchKernel(kernel, grid, 1, 1, block, 1, 1, 0, stream, 0, ctypes.addressof(extra)),
          "cuLaunchKernel(extra)")
check(d.cuStreamSynchronize(stream), "cuStreamSynchronize")
pinned = check(d.cuMemAllocHost(nbytes), "cuMemAllocHost")
check(d.cuMemcpyDtoHAsync(pinned, dc, nbytes, stream), "cuMemcpyDtoHAsync")
check(d.cuCtxSynchronize(), "cuCtxSynchronize")
ctypes.memmove(c.ctypes.data, pinned, nbytes)
wrong = int(np.count_nonzero(c != a + b))
for p in (da, db, dc):
    check(d.cuMemFree(p), "cuMemFree")
check(d.cuMemFreeHost(pinned), "cuMemFreeHost")
check(d.cuStreamDestroy(stream), "cuStreamDestroy")
check(d.cuModuleUnload(module), "cuModuleUnload")
check(d.cuDevicePrimaryCtxRelease(dev), "cuDevicePrimaryCtxRelease")
print(f"{'PASS' if wrong == 0 else 'FAIL'}: driver-API vector add of {n} elements, {wrong} wrong")
