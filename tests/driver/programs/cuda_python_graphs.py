"""CUDA graphs through cuda-python's driver bindings: a captured graph of a memset, K kernels and a
copy to pinned memory, launched twice; an explicit graph with a kernel node and a host node, its
kernel node changed in the executable graph, an update refused for another topology; a host
function in stream order; the documented capture errors. Prints one `name value` line per fact
and PASS or FAIL; the server's own counters show what a launch cost."""
import ctypes
import sys

import numpy as np
from cuda.bindings import driver as d

from driver_checks import check, failures, report

ptx = open(sys.argv[1], "rb").read() + b"\0"
K = int(sys.argv[2])
check(d.cuInit(0), "cuInit")
ctx = check(d.cuDevicePrimaryCtxRetain(check(d.cuDeviceGet(0), "cuDeviceGet")), "cuDevicePrimaryCtxRetain")
check(d.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
module = check(d.cuModuleLoadData(ptx), "cuModuleLoadData")
vadd = check(d.cuModuleGetFunction(module, b"_Z4vaddPKfS0_Pfi"), "cuModuleGetFunction")   # c = a + b
n = 1000
nbytes = n * 4
b = np.arange(n, dtype=np.float32)
db, dc = (check(d.cuMemAlloc(nbytes), "cuMemAlloc") for _ in range(2))
check(d.cuMemcpyHtoD(db, b.ctypes.data, nbytes), "cuMemcpyHtoD")
pinned = check(d.cuMemAllocHost(nbytes), "cuMemAllocHost")
out = np.ctypeslib.as_array((ctypes.c_float * n).from_address(int(pinned)))
stream = check(d.cuStreamCreate(0), "cuStreamCreate")
T = ctypes.c_void_p
args = ((int(dc), int(db), int(dc), n), (T, T, T, ctypes.c_int))
grid = (n + 127) // 128

# 1. capture: dc = 0, then K times dc += b, then a copy to pinned memory
mode = d.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_GLOBAL
check(d.cuStreamBeginCapture(stream, mode), "cuStreamBeginCapture")
report("capturing", check(d.cuStreamIsCapturing(stream), "cuStreamIsCapturing")
       == d.CUstreamCaptureStatus.CU_STREAM_CAPTURE_STATUS_ACTIVE)
check(d.cuMemsetD32Async(dc, 0, n, stream), "cuMemsetD32Async")
for _ in range(K):
    check(d.cuLaunchKernel(vadd, grid, 1, 1, 128, 1, 1, 0, stream, args, 0), "cuLaunchKernel")
check(d.cuMemcpyDtoHAsync(pinned, dc, nbytes, stream), "cuMemcpyDtoHAsync")
graph = check(d.cuStreamEndCapture(stream), "cuStreamEndCapture")
_, count = check(d.cuGraphGetNodes(graph), "cuGraphGetNodes")
print("captured nodes", count)
exe = check(d.cuGraphInstantiate(graph, 0), "cuGraphInstantiate")
for launch in range(2):
    out[:] = -1
    check(d.cuGraphLaunch(exe, stream), "cuGraphLaunch")
    check(d.cuStreamSynchronize(stream), "cuStreamSynchronize")
    report(f"captured graph, launch {launch + 1}", bool(np.all(out == K * b)))

from cricket.client.runtime import RUNTIME           # the client in this process: the server's counters
stats = {s.name: s.value for s in RUNTIME.conn._stub.CR_SESSION_STATS().stats}
for key in ("calls.graph_launch", "calls.launch", "kernels"):
    print(key, stats.get(key, 0))

# 2. explicit: a kernel node (dc = dc + b), then a host node
check(d.cuMemsetD32(dc, 0, n), "cuMemsetD32")
g2 = check(d.cuGraphCreate(0), "cuGraphCreate")
params = d.CUDA_KERNEL_NODE_PARAMS()
params.func = vadd
params.gridDimX, params.gridDimY, params.gridDimZ = grid, 1, 1
params.blockDimX, params.blockDimY, params.blockDimZ = 128, 1, 1
params.sharedMemBytes = 0
params.kernelParams = args
knode = check(d.cuGraphAddKernelNode(g2, None, 0, params), "cuGraphAddKernelNode")
seen = []
HOSTFN = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


@HOSTFN
def host_node(data):
    seen.append(("node", data))


host = d.CUDA_HOST_NODE_PARAMS()
host.fn = d.CUhostFn(ctypes.cast(host_node, ctypes.c_void_p).value)
check(d.cuGraphAddHostNode(g2, [knode], 1, host), "cuGraphAddHostNode")
exe2 = check(d.cuGraphInstantiate(g2, 0), "cuGraphInstantiate")
check(d.cuGraphLaunch(exe2, stream), "cuGraphLaunch")
check(d.cuCtxSynchronize(), "cuCtxSynchronize")
check(d.cuMemcpyDtoH(out.ctypes.data, dc, nbytes), "cuMemcpyDtoH")
report("explicit graph: kernel node", bool(np.all(out == b)))
report("host node ran after the kernel node", len(seen) == 1)
other = ((int(db), int(db), int(dc), n), (T, T, T, ctypes.c_int))      # dc = b + b
params.kernelParams = other
check(d.cuGraphExecKernelNodeSetParams(exe2, knode, params), "cuGraphExecKernelNodeSetParams")
check(d.cuGraphLaunch(exe2, stream), "cuGraphLaunch")
check(d.cuStreamSynchronize(stream), "cuStreamSynchronize")
check(d.cuMemcpyDtoH(out.ctypes.data, dc, nbytes), "cuMemcpyDtoH")
report("cuGraphExecKernelNodeSetParams", bool(np.all(out == 2 * b)))
check(d.cuGraphAddEmptyNode(g2, None, 0), "cuGraphAddEmptyNode")
err, _ = d.cuGraphExecUpdate(exe2, g2)     # the result info comes back only on success
report("update with another topology", err == d.CUresult.CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE)


# 3. a host function in stream order: it sees the kernel's result
@HOSTFN
def host_fn(data):
    seen.append(("fn", float(out[1])))


check(d.cuMemcpyHtoD(dc, b.ctypes.data, nbytes), "cuMemcpyHtoD")
check(d.cuLaunchKernel(vadd, grid, 1, 1, 128, 1, 1, 0, stream, ((int(dc), int(db), int(dc), n),
                                                                 (T, T, T, ctypes.c_int)), 0), "cuLaunchKernel")
check(d.cuMemcpyDtoHAsync(pinned, dc, nbytes, stream), "cuMemcpyDtoHAsync")
out[1] = -1
check(d.cuLaunchHostFunc(stream, d.CUhostFn(ctypes.cast(host_fn, ctypes.c_void_p).value), 0), "cuLaunchHostFunc")
check(d.cuStreamSynchronize(stream), "cuStreamSynchronize")
report("cuLaunchHostFunc after the stream's earlier work", seen[-1] == ("fn", 2.0))

# 4. capture errors
check(d.cuStreamBeginCapture(stream, mode), "cuStreamBeginCapture")
err, _ = d.cuMemAlloc(16)
report("cuMemAlloc in a global capture", err == d.CUresult.CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)
err, _ = d.cuStreamEndCapture(stream)
report("the capture was invalidated", err == d.CUresult.CUDA_ERROR_STREAM_CAPTURE_INVALIDATED)
err = d.cuStreamSynchronize(stream)[0]
report("the stream works again", err == d.CUresult.CUDA_SUCCESS)

for h in (exe, exe2):
    check(d.cuGraphExecDestroy(h), "cuGraphExecDestroy")
for h in (graph, g2):
    check(d.cuGraphDestroy(h), "cuGraphDestroy")
print("FAIL" if failures else "PASS", "graphs through cuda-python")
