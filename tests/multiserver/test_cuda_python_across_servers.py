"""cuda-python on the libcuda.so.1 replacement, with CRICKET_SERVER listing two servers: the
driver's device snapshot is the combined list, a kernel runs in each device's primary context, and
cuMemcpyPeer copies between devices of the two servers."""
from __future__ import annotations

import pytest

pytest.importorskip("cuda.bindings.driver", reason="cuda-python not installed (pip install -e '.[cuda]')")

# after cuda_python_support.PRELUDE (cuda-python's driver as ``d``, ``ok``, cuInit)
PROGRAM = r"""
count = ok(d.cuDeviceGetCount())
ptx = open(sys.argv[1], "rb").read() + b"\0"
n = 4096
a = np.arange(n, dtype=np.float32)
results, buffers = [], []
for i in range(count):
    dev = ok(d.cuDeviceGet(i))
    ctx = ok(d.cuDevicePrimaryCtxRetain(dev))
    ok(d.cuCtxSetCurrent(ctx))
    mod = ok(d.cuModuleLoadData(ptx))
    fn = ok(d.cuModuleGetFunction(mod, b"vadd"))
    da, dc = ok(d.cuMemAlloc(a.nbytes)), ok(d.cuMemAlloc(a.nbytes))
    ok(d.cuMemcpyHtoD(da, a, a.nbytes))
    b = np.full(n, float(i + 1), dtype=np.float32)
    db = ok(d.cuMemAlloc(a.nbytes))
    ok(d.cuMemcpyHtoD(db, b, b.nbytes))
    args = [np.array([int(x)], dtype=np.uint64) for x in (da, db, dc)] + [np.array([n], dtype=np.int32)]
    ptrs = np.array([x.ctypes.data for x in args], dtype=np.uint64)
    ok(d.cuLaunchKernel(fn, n // 256, 1, 1, 256, 1, 1, 0, 0, ptrs.ctypes.data, 0))
    ok(d.cuCtxSynchronize())
    c = np.empty(n, dtype=np.float32)
    ok(d.cuMemcpyDtoH(c, dc, c.nbytes))
    results.append(int((c != a + i + 1).sum()))
    buffers.append((ctx, int(dc)))
# device 0's result to the last device, through cuMemcpyPeer (two servers)
(ctx0, c0), (ctxn, cn) = buffers[0], buffers[-1]
ok(d.cuMemcpyPeer(cn, ctxn, c0, ctx0, a.nbytes))
ok(d.cuCtxSetCurrent(ctxn))
back = np.empty(n, dtype=np.float32)
ok(d.cuMemcpyDtoH(back, cn, back.nbytes))
can = ok(d.cuDeviceCanAccessPeer(ok(d.cuDeviceGet(0)), ok(d.cuDeviceGet(count - 1))))
names = [ok(d.cuDeviceGetName(64, ok(d.cuDeviceGet(i)))).split(b"\0")[0].decode() for i in range(count)]
print(json.dumps({"count": count, "wrong": results, "peer_wrong": int((back != a + 1).sum()),
                  "can_access": can, "names": names}))
"""


def test_cuda_python_on_two_servers(servers, driver_dir, vadd_ptx, cuda_python):
    out = cuda_python.run_program(cuda_python.PRELUDE + PROGRAM, driver_dir, ",".join(s.address for s in servers),
                                  str(vadd_ptx), timeout=300)
    assert out["count"] == 3 and out["wrong"] == [0, 0, 0]
    assert out["peer_wrong"] == 0 and out["can_access"] == 0
    assert out["names"][2].endswith("#1")           # the second server's second device last
