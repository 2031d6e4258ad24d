"""cuda.core: compile a kernel with NVRTC (to PTX), load it (cuLibraryLoadData), allocate from the
device's memory pool, launch with cuLaunchKernelEx on a stream, check the result. Prints PASS or FAIL."""
import numpy as np
from cuda.bindings import driver as d
from cuda.core import Device, LaunchConfig, Program, ProgramOptions, launch

CODE = r"""
extern "C" __global__ void scale(float *x, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] *= a;
}
"""

dev = Device()
dev.set_current()
stream = dev.create_stream()
kernel = Program(CODE, code_type="c++", options=ProgramOptions(arch="sm_75")).compile("ptx").get_kernel("scale")
n = 1000
buf = dev.allocate(n * 4, stream=stream)
host = np.arange(n, dtype=np.float32)
(err,) = d.cuMemcpyHtoD(int(buf.handle), host.ctypes.data, n * 4)
assert err == d.CUresult.CUDA_SUCCESS, err
launch(stream, LaunchConfig(grid=(n + 127) // 128, block=128), kernel, buf, np.float32(2.5), np.int32(n))
stream.sync()
out = np.zeros(n, dtype=np.float32)
(err,) = d.cuMemcpyDtoH(out.ctypes.data, int(buf.handle), n * 4)
assert err == d.CUresult.CUDA_SUCCESS, err
buf.close(stream)
wrong = int(np.count_nonzero(out != host * np.float32(2.5)))
print(f"{'PASS' if wrong == 0 else 'FAIL'}: cuda.core NVRTC kernel on {n} elements, {wrong} wrong")
