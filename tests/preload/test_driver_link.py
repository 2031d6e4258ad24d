"""What the runtime shim does for programs that use the driver API beside it, as PyTorch does: the
driver is initialised at the first runtime call, its entry points come from
cudaGetDriverEntryPointByVersion, capture queries and log callbacks answer, and calls made by
destructors after the client finished still get the answers they need. Through `cricket run` on
emu, from a Python program using ctypes."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROGRAM = textwrap.dedent("""
    import ctypes
    from ctypes import byref, c_int, c_size_t, c_uint, c_void_p
    rt = ctypes.CDLL("libcudart.so.13")
    cuda = ctypes.CDLL("libcuda.so.1")
    n = c_int(-1)
    print("count", rt.cudaGetDeviceCount(byref(n)), n.value)
    flags, active = c_uint(), c_int(-1)
    print("primary state", cuda.cuDevicePrimaryCtxGetState(0, byref(flags), byref(active)))

    rt.cudaGetDriverEntryPointByVersion.argtypes = [ctypes.c_char_p, ctypes.POINTER(c_void_p), c_uint,
                                                    ctypes.c_ulonglong, ctypes.POINTER(c_int)]
    for name in (b"cuDeviceGet", b"cuNoSuchFunction"):
        fn, status = c_void_p(), c_int(-1)
        rc = rt.cudaGetDriverEntryPointByVersion(name, byref(fn), 12000, 0, byref(status))
        print("entry", name.decode(), rc, status.value,
              fn.value == ctypes.cast(cuda.cuDeviceGet, c_void_p).value if fn.value else None)

    capture = c_int(-1)
    print("capturing", rt.cudaStreamIsCapturing(None, byref(capture)), capture.value)
    mode = c_int(2)                                        # cudaStreamCaptureModeRelaxed
    first = rt.cudaThreadExchangeStreamCaptureMode(byref(mode))
    previous = mode.value
    print("mode", first, previous, rt.cudaThreadExchangeStreamCaptureMode(byref(mode)), mode.value)

    CALLBACK = ctypes.CFUNCTYPE(None, c_void_p, c_int, ctypes.c_char_p, c_size_t)
    callback, handle = CALLBACK(lambda *args: None), c_void_p()
    print("logs", cuda.cuLogsRegisterCallback(callback, None, byref(handle)), handle.value is not None,
          cuda.cuLogsUnregisterCallback(handle), cuda.cuLogsUnregisterCallback(handle))
    limit = c_size_t(99)
    print("cig limit", cuda.cuCtxGetLimit(byref(limit), 8), limit.value)

    from cricket._cext import cudart_api
    cudart_api._mark_dead_at_exit()                        # what Python's atexit does
    device, event = c_int(-1), c_void_p()
    print("after exit", rt.cudaGetDevice(byref(device)), device.value, rt.cudaSetDevice(0),
          rt.cudaEventCreateWithFlags(byref(event), 0), rt.cudaEventRecord(event, None),
          rt.cudaEventSynchronize(event), rt.cudaEventDestroy(event), rt.cudaFree(None),
          rt.cudaMalloc(byref(c_void_p()), 16))
""")


def test_runtime_shim_links_the_driver_and_answers_torchs_calls():
    env = {k: v for k, v in os.environ.items() if not k.startswith("CRICKET_SERVER")}
    env["PYTHONPATH"] = str(ROOT)
    proc = subprocess.run([sys.executable, "-m", "cricket", "run", "--backend", "emu", "--",
                           sys.executable, "-c", PROGRAM], capture_output=True, text=True, env=env,
                          timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.splitlines() == [
        "count 0 1",
        "primary state 0",                         # not CUDA_ERROR_NOT_INITIALIZED: cuInit ran
        "entry cuDeviceGet 0 0 True",
        "entry cuNoSuchFunction 0 1 None",         # cudaDriverEntryPointSymbolNotFound, no error
        "capturing 0 0",
        "mode 0 0 0 2",
        "logs 0 True 0 1",                         # a second unregister: CUDA_ERROR_INVALID_VALUE
        "cig limit 0 0",
        "after exit 0 0 0 0 0 0 0 0 4",            # ...but a new allocation: cudaErrorCudartUnloading
    ]
