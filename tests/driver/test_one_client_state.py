"""One client state per process: a Python program that loads both cricket libraries (the
libcudart.so.13 shim and the libcuda.so.1 replacement, by path through ctypes) gets one runtime
module and one ``RUNTIME``, whichever library a call entered through, with the compiled hot paths
and with their pure-Python twins (``CRICKET_PUREPYTHON=1``)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest


ROOT = Path(__file__).resolve().parents[2]
SHIM = ROOT / "cricket" / "_preload" / "libcricket-cudart.so"

PROBE = textwrap.dedent('''
    import ctypes, gc, json, os, sys
    rt_lib = ctypes.CDLL(sys.argv[1], os.RTLD_NOW | os.RTLD_GLOBAL)      # the libcudart shim
    drv_lib = ctypes.CDLL(sys.argv[2], os.RTLD_NOW | os.RTLD_GLOBAL)     # the libcuda replacement
    out = {}
    count = ctypes.c_int(-1)
    out["cudaGetDeviceCount"] = rt_lib.cudaGetDeviceCount(ctypes.byref(count))
    out["cuInit"] = drv_lib.cuInit(0)
    ctx = ctypes.c_void_p()
    drv_lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0)
    drv_lib.cuCtxSetCurrent(ctx)
    stream = ctypes.c_void_p()
    out["cuStreamCreate"] = drv_lib.cuStreamCreate(ctypes.byref(stream), 0)
    # a stream made through the driver is known to the runtime: the same table
    out["cudaStreamSynchronize"] = rt_lib.cudaStreamSynchronize(stream)
    ptr = ctypes.c_void_p()
    out["cudaMalloc"] = rt_lib.cudaMalloc(ctypes.byref(ptr), ctypes.c_size_t(4096))
    base, size = ctypes.c_uint64(), ctypes.c_size_t()
    out["cuMemGetAddressRange"] = drv_lib.cuMemGetAddressRange_v2(ctypes.byref(base), ctypes.byref(size),
                                                                  ctypes.c_uint64(ptr.value))
    out["range"] = [base.value == ptr.value, size.value]
    import cricket._cext.cudart_api as cudart_api, cricket._cext.cuda_api as cuda_api
    from cricket.client import driver_api, runtime, runtime_api, runtime_calls
    out["attached"] = [cudart_api.attached(), cuda_api.attached()]
    out["runtime_file"] = runtime.__file__
    out["launch_queue"] = runtime.launch_queue.__name__
    out["same_runtime"] = (runtime_calls.rt is runtime.RUNTIME and driver_api.rt is runtime.RUNTIME
                           and sys.modules["cricket.client.runtime"] is runtime)
    out["runtime_instances"] = sum(type(o).__name__ == "Runtime" for o in gc.get_objects())
    out["distinct_RUNTIME_objects"] = len({id(m.RUNTIME) for m in list(sys.modules.values())
                                           if getattr(m, "RUNTIME", None) is not None})
    out["registry_shared"] = runtime_api.IMPLEMENTATIONS["cudaLaunchKernel"].__wrapped__ is runtime_calls.launch_kernel
    print(json.dumps(out))
''')


@pytest.mark.parametrize("mode", ["compiled", "pure"])
def test_both_libraries_in_one_process_share_one_client_state(driver_dir, server, mode):
    if not SHIM.exists():
        pytest.skip(f"the libcudart shim is not built ({SHIM}); run make build")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("CRICKET_") and k != "LD_PRELOAD"}
    env.update(CRICKET_SERVER=server.address, PYTHONPATH=str(ROOT))
    if mode == "pure":
        env["CRICKET_PUREPYTHON"] = "1"
    proc = subprocess.run([sys.executable, "-c", PROBE, str(SHIM), str(driver_dir / "libcricket-cuda.so")],
                          capture_output=True, text=True, env=env, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["cudaGetDeviceCount"] == got["cuInit"] == got["cuStreamCreate"] == 0, got
    assert got["cudaStreamSynchronize"] == got["cudaMalloc"] == got["cuMemGetAddressRange"] == 0, got
    assert got["range"] == [True, 4096]
    assert got["attached"] == [True, True]
    assert got["same_runtime"] and got["registry_shared"]
    assert got["runtime_instances"] == 1
    assert got["distinct_RUNTIME_objects"] == 1
    assert got["runtime_file"].endswith("runtime.py")        # plain Python either way
    if mode == "pure":
        assert got["launch_queue"] == "cricket.client.launch_queue"
    elif got["launch_queue"] != "cricket._cext.launch_queue":
        pytest.skip("the hot paths are not compiled here (run make build); the pure twins ran")
