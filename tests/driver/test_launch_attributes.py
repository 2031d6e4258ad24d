"""cuLaunchKernelEx's launch attributes follow the runtime shim's policy
(``cricket.client.launch_attributes``): hints are accepted and the kernel runs, an attribute cricket
cannot honour fails with CUDA_ERROR_NOT_SUPPORTED before anything is launched. A PTX module built
by nvcc at test time, loaded through the libcuda.so.1 replacement by a ctypes program, against a
real server (emu)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest


ROOT = Path(__file__).resolve().parents[2]

PROBE = textwrap.dedent('''
    import ctypes, json, os, struct, sys
    lib = ctypes.CDLL(sys.argv[1], os.RTLD_NOW | os.RTLD_GLOBAL)
    ptx = open(sys.argv[2], "rb").read() + b"\\0"
    P, V = ctypes.POINTER, ctypes.c_void_p

    class Attribute(ctypes.Structure):           # CUlaunchAttribute
        _fields_ = [("id", ctypes.c_uint32), ("pad", ctypes.c_char * 4), ("value", ctypes.c_uint8 * 64)]

    class Config(ctypes.Structure):              # CUlaunchConfig
        _fields_ = [("grid", ctypes.c_uint * 3), ("block", ctypes.c_uint * 3), ("shared", ctypes.c_uint),
                    ("stream", V), ("attrs", P(Attribute)), ("num_attrs", ctypes.c_uint)]

    def attribute(ident, *words):
        a = Attribute(id=ident)
        struct.pack_into("<%dI" % len(words), a.value, 0, *words)
        return a

    assert lib.cuInit(0) == 0
    ctx, mod, fn = V(), V(), V()
    lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0)
    lib.cuCtxSetCurrent(ctx)
    assert lib.cuModuleLoadData(ctypes.byref(mod), ptx) == 0
    assert lib.cuModuleGetFunction(ctypes.byref(fn), mod, b"vadd") == 0
    n = 64
    a, b, c = ctypes.c_uint64(), ctypes.c_uint64(), ctypes.c_uint64()
    for p in (a, b, c):
        assert lib.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(4 * n)) == 0
    host = (ctypes.c_float * n)(*range(n))
    lib.cuMemcpyHtoD_v2(a, host, ctypes.c_size_t(4 * n))
    lib.cuMemcpyHtoD_v2(b, host, ctypes.c_size_t(4 * n))
    count = ctypes.c_int(n)
    params = (V * 4)(*(ctypes.cast(ctypes.byref(x), V) for x in (a, b, c, count)))

    def launch(*attrs):
        lib.cuMemsetD32_v2(c, ctypes.c_uint(0), ctypes.c_size_t(n))
        array = (Attribute * max(len(attrs), 1))(*attrs)
        config = Config((1, 1, 1), (n, 1, 1), 0, None, array, len(attrs))
        result = lib.cuLaunchKernelEx(ctypes.byref(config), fn, params, None)
        lib.cuCtxSynchronize()
        out = (ctypes.c_float * n)()
        lib.cuMemcpyDtoH_v2(out, c, ctypes.c_size_t(4 * n))
        return [result, sum(out[i] == 2 * i for i in range(1, n))]   # c[0] is 0 either way

    result = {
        "none": launch(),
        "hints": launch(attribute(8, 0), attribute(6, 1), attribute(4, 1, 1, 1), attribute(1, 0, 0)),
        "cooperative": launch(attribute(2, 1)),
        "cluster": launch(attribute(4, 2, 1, 1)),
        "unknown": launch(attribute(99, 0)),
    }
    print(json.dumps(result))
''')


@pytest.fixture(scope="module")
def ptx(vadd_ptx) -> Path:
    return vadd_ptx


@pytest.mark.nvcc
def test_hints_and_cooperative_launch_and_unhonourable_attributes_are_not_supported(driver_dir, server, ptx):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CRICKET_") and k != "LD_PRELOAD"}
    env.update(CRICKET_SERVER=server.address, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-c", PROBE, str(driver_dir / "libcricket-cuda.so"), str(ptx)],
                          capture_output=True, text=True, env=env, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["none"] == [0, 63] and got["hints"] == [0, 63]        # launched: the sums are there
    not_supported = 801                                              # CUDA_ERROR_NOT_SUPPORTED
    assert got["cooperative"] == [0, 63]                             # a cooperative launch runs
    assert got["cluster"] == got["unknown"] == [not_supported, 0]
    for name in ("cudaLaunchAttributeClusterDimension", "cudaLaunchAttribute99 (unknown)"):
        assert sum(name in line for line in proc.stderr.splitlines()) == 1, proc.stderr
