"""Contexts made by cuCtxCreate (_v2, _v3, _v4) and ended by cuCtxDestroy: pushed on the calling
thread's stack, flags and creation parameters checked as cuda.h documents, a destroyed handle
refused, and what was allocated or loaded in a context freed with it on a real server."""
from __future__ import annotations

import subprocess
import sys

import pytest

from .driver_support import environment, run_probe

INVALID_VALUE, INVALID_DEVICE, INVALID_CONTEXT, NOT_SUPPORTED = 1, 101, 201, 801
UNSUPPORTED_EXEC_AFFINITY, CONTEXT_IS_DESTROYED = 224, 709

DECLARATIONS = """
import ctypes, threading
P = ctypes.c_void_p
class CUexecAffinityParam(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("smCount", ctypes.c_uint)]
class CUctxCigParam(ctypes.Structure):
    _fields_ = [("sharedDataType", ctypes.c_int), ("sharedData", P)]
class CUctxCreateParams(ctypes.Structure):
    _fields_ = [("execAffinityParams", ctypes.POINTER(CUexecAffinityParam)), ("numExecAffinityParams", ctypes.c_int),
                ("cigParams", ctypes.POINTER(CUctxCigParam))]
lib.cuCtxCreate_v2.argtypes = [ctypes.POINTER(P), ctypes.c_uint, ctypes.c_int]
lib.cuCtxCreate_v3.argtypes = [ctypes.POINTER(P), ctypes.POINTER(CUexecAffinityParam), ctypes.c_int, ctypes.c_uint, ctypes.c_int]
lib.cuCtxCreate_v4.argtypes = [ctypes.POINTER(P), ctypes.POINTER(CUctxCreateParams), ctypes.c_uint, ctypes.c_int]
lib.cuCtxDestroy_v2.argtypes = [P]
lib.cuCtxGetApiVersion.argtypes = [P, ctypes.POINTER(ctypes.c_uint)]
lib.cuCtxPopCurrent_v2.argtypes = [ctypes.POINTER(P)]
lib.cuInit(0)
def current():
    c = P()
    lib.cuCtxGetCurrent(ctypes.byref(c))
    return c.value
def flags():
    f = ctypes.c_uint(12345)
    return [lib.cuCtxGetFlags(ctypes.byref(f)), f.value]
"""


def test_created_context_is_pushed_and_popped_like_any_other(driver_lib):
    p = run_probe(driver_lib, DECLARATIONS + """
primary = P()
lib.cuDevicePrimaryCtxRetain(ctypes.byref(primary), 0)
lib.cuCtxSetCurrent(primary)
a, b = P(), P()
steps = [lib.cuCtxCreate_v2(ctypes.byref(a), 4, 0), current() == a.value, flags()]     # BLOCKING_SYNC
dev, version = ctypes.c_int(-1), ctypes.c_uint()
steps += [lib.cuCtxGetDevice_v2(ctypes.byref(dev), None), dev.value,
          lib.cuCtxGetApiVersion(a, ctypes.byref(version)), version.value]
steps += [lib.cuCtxCreate_v4(ctypes.byref(b), None, 0x10, 0), current() == b.value, b.value != a.value, flags()]
popped = P()
steps += [lib.cuCtxPopCurrent_v2(ctypes.byref(popped)), popped.value == b.value, current() == a.value]
steps += [lib.cuCtxPushCurrent_v2(b), current() == b.value]
# destroying a (below the top) takes it off this thread's stack; b stays current, then primary
steps += [lib.cuCtxDestroy_v2(a), current() == b.value, lib.cuCtxDestroy_v2(b), current() == primary.value]
result["steps"] = steps
""")
    assert p["steps"] == [0, True, [0, 4], 0, 0, 0, 3020,
                          0, True, True, [0, 0x10],
                          0, True, True,
                          0, True,
                          0, True, 0, True]


def test_destroyed_context_is_refused(driver_lib):
    p = run_probe(driver_lib, DECLARATIONS + """
ctx, primary = P(), P()
lib.cuCtxCreate_v2(ctypes.byref(ctx), 0, 0)
lib.cuDevicePrimaryCtxRetain(ctypes.byref(primary), 0)
seen = []
ready, done = threading.Event(), threading.Event()
other = threading.Thread(target=lambda: (lib.cuCtxSetCurrent(ctx), seen.append(current() == ctx.value), ready.set(),
                                         done.wait(), seen.append(flags()), seen.append(lib.cuCtxSynchronize())))
other.start()
ready.wait()
rc = [lib.cuCtxDestroy_v2(ctx), current()]
done.set(); other.join()
version = ctypes.c_uint()
rc += [lib.cuCtxDestroy_v2(ctx), lib.cuCtxSetCurrent(ctx), lib.cuCtxPushCurrent_v2(ctx),
       lib.cuCtxGetApiVersion(ctx, ctypes.byref(version)), lib.cuCtxDestroy_v2(None),
       lib.cuCtxDestroy_v2(primary), lib.cuCtxDestroy_v2(P(0x1234))]
result.update(rc=rc, other=seen)
""")
    # the creating thread popped it; the other thread still has it current and is told it is destroyed
    assert p["rc"] == [0, None, INVALID_CONTEXT, INVALID_CONTEXT, INVALID_CONTEXT, INVALID_CONTEXT,
                       INVALID_VALUE, INVALID_CONTEXT, INVALID_CONTEXT]
    assert p["other"] == [True, [CONTEXT_IS_DESTROYED, 12345], CONTEXT_IS_DESTROYED]


def test_creation_flags_and_parameters_are_checked(driver_lib):
    p = run_probe(driver_lib, DECLARATIONS + """
ctx = P()
affinity = (CUexecAffinityParam * 1)(CUexecAffinityParam(0, 4))
cig = CUctxCigParam(1, P(0x1000))
rc = [lib.cuCtxCreate_v2(ctypes.byref(ctx), 1 | 2, 0),           # two schedules
      lib.cuCtxCreate_v2(ctypes.byref(ctx), 0x100, 0),           # past CU_CTX_FLAGS_MASK
      lib.cuCtxCreate_v2(ctypes.byref(ctx), 0, 3),
      lib.cuCtxCreate_v2(None, 0, 0),
      lib.cuCtxCreate_v3(ctypes.byref(ctx), affinity, 1, 0, 0),
      lib.cuCtxCreate_v3(ctypes.byref(ctx), None, 1, 0, 0),
      lib.cuCtxCreate_v4(ctypes.byref(ctx), ctypes.byref(CUctxCreateParams(None, 0, ctypes.pointer(cig))), 0, 0),
      lib.cuCtxCreate_v4(ctypes.byref(ctx), ctypes.byref(CUctxCreateParams(affinity, 1, ctypes.pointer(cig))), 0, 0)]
result.update(rc=rc, current=current())
ok = [lib.cuCtxCreate_v3(ctypes.byref(ctx), None, 0, 8, 0), flags(),
      lib.cuCtxCreate_v4(ctypes.byref(ctx), ctypes.byref(CUctxCreateParams(None, 0, None)), 1, 0), flags()]
result["ok"] = ok
""")
    assert p["rc"] == [INVALID_VALUE, INVALID_VALUE, INVALID_DEVICE, INVALID_VALUE, UNSUPPORTED_EXEC_AFFINITY,
                       INVALID_VALUE, NOT_SUPPORTED, INVALID_VALUE]
    assert p["current"] is None                 # nothing was pushed by a refused creation
    assert p["ok"] == [0, [0, 8], 0, [0, 1]]


CUDA_PYTHON_PROGRAM = r"""
import sys
from cuda.bindings import driver as d
def ok(result, what):
    err, *values = result if isinstance(result, tuple) else (result,)
    if err != d.CUresult.CUDA_SUCCESS:
        sys.exit(f"{what}: {err.name}")
    return values[0] if len(values) == 1 else values
ok(d.cuInit(0), "cuInit")
dev = ok(d.cuDeviceGet(0), "cuDeviceGet")
primary = ok(d.cuDevicePrimaryCtxRetain(dev), "retain")
ok(d.cuCtxSetCurrent(primary), "set")
kept = ok(d.cuMemAlloc(1 << 20), "alloc in the primary context")
free0, _ = ok(d.cuMemGetInfo(), "info")
ctx = ok(d.cuCtxCreate(None, 0, dev), "cuCtxCreate")
print("current is new", int(ok(d.cuCtxGetCurrent(), "current")) == int(ctx))
mine = [ok(d.cuMemAlloc(8 << 20), "alloc") for _ in range(3)]
ordered = ok(d.cuMemAllocAsync(1 << 20, 0), "cuMemAllocAsync")     # belongs to no context
CONTEXT = d.CUpointer_attribute.CU_POINTER_ATTRIBUTE_CONTEXT
print("pointer contexts", int(ok(d.cuPointerGetAttribute(CONTEXT, mine[0]), "attr")) == int(ctx),
      int(ok(d.cuPointerGetAttribute(CONTEXT, kept), "attr")) == int(primary))
module = ok(d.cuModuleLoadData(open(sys.argv[1], "rb").read() + b"\0"), "load")
ok(d.cuModuleGetFunction(module, b"vadd"), "function")
stream = ok(d.cuStreamCreate(0), "stream")
free1, _ = ok(d.cuMemGetInfo(), "info")
print("allocated", free0 - free1 >= 24 << 20)
ok(d.cuCtxSynchronize(), "sync")
ok(d.cuCtxDestroy(ctx), "cuCtxDestroy")
print("current after destroy is primary", int(ok(d.cuCtxGetCurrent(), "current")) == int(primary))
free2, _ = ok(d.cuMemGetInfo(), "info")
print("freed with its context", free2 == free0 - (1 << 20))
print("free again", d.cuMemFree(mine[0])[0].name)
print("module gone", d.cuModuleGetFunction(module, b"vadd")[0].name)
print("stream gone", d.cuStreamDestroy(stream)[0].name)
print("primary allocation kept", d.cuMemFree(kept)[0].name)
print("stream-ordered allocation kept", d.cuMemFreeAsync(ordered, 0)[0].name)
print("destroy again", d.cuCtxDestroy(ctx)[0].name)
"""


@pytest.mark.nvcc
def test_memory_modules_and_streams_are_freed_with_their_context(driver_dir, server, vadd_ptx):
    pytest.importorskip("cuda.bindings.driver", reason="cuda-python not installed (pip install cuda-python)")
    proc = subprocess.run([sys.executable, "-c", CUDA_PYTHON_PROGRAM, str(vadd_ptx)], capture_output=True, text=True,
                          env=environment(driver_dir, server), timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines() == [
        "current is new True", "pointer contexts True True", "allocated True", "current after destroy is primary True",
        "freed with its context True", "free again CUDA_ERROR_INVALID_VALUE",
        "module gone CUDA_ERROR_INVALID_HANDLE", "stream gone CUDA_ERROR_INVALID_HANDLE",
        "primary allocation kept CUDA_SUCCESS", "stream-ordered allocation kept CUDA_SUCCESS",
        "destroy again CUDA_ERROR_INVALID_CONTEXT"]
