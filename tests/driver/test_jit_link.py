"""JIT linking through the libcuda.so.1 replacement on a real emu server: cuLinkCreate options
written back as cuda.h documents (logs capped at their buffers, their sizes and the wall time
written over the option values), inputs refused with the documented errors, symbols resolved
across PTX, fatbin and host-object inputs, and the linked image run by cuda-python. The inputs
are examples/jit_link's two halves, built by nvcc at test time."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from .driver_support import environment, run_probe

pytestmark = pytest.mark.nvcc

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
INVALID_VALUE, INVALID_IMAGE, INVALID_CONTEXT, INVALID_PTX = 1, 200, 201, 218
FILE_NOT_FOUND, INVALID_HANDLE, NOT_SUPPORTED = 301, 400, 801


@pytest.fixture(scope="module")
def inputs(nvcc_build) -> dict[str, Path]:
    """The kernel and device halves as relocatable PTX, the device half as a fatbin, as a host
    object (nvcc -rdc=true -c) and in a static library (nvcc -lib), the kernel half as a host object
    (the PTX builds are tests/fatbin/test_link_symbols.py's too: nvcc_build runs them once)."""
    files = {"kernel.ptx": ("-ptx", "kernel"), "device.ptx": ("-ptx", "device"),
             "device.fatbin": ("-fatbin", "device"), "kernel.o": ("-c", "kernel"), "device.o": ("-c", "device")}
    built = {name: nvcc_build("-rdc=true", flag, "-arch=sm_75", EXAMPLES / f"jit_link_{half}.cu", output=name)
             for name, (flag, half) in files.items()}
    built["libdevice.a"] = nvcc_build("-lib", built["device.o"], output="libdevice.a")
    return built


PROBE_SETUP = """
import ctypes, struct
P = ctypes.c_void_p
lib.cuLinkCreate_v2.argtypes = [ctypes.c_uint, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(P), ctypes.POINTER(P)]
lib.cuLinkAddData_v2.argtypes = [P, ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_uint,
                                 ctypes.POINTER(ctypes.c_int), ctypes.POINTER(P)]
lib.cuLinkAddFile_v2.argtypes = [P, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint, ctypes.POINTER(ctypes.c_int),
                                 ctypes.POINTER(P)]
lib.cuLinkComplete.argtypes = [P, ctypes.POINTER(P), ctypes.POINTER(ctypes.c_size_t)]
lib.cuLinkDestroy.argtypes = [P]
lib.cuModuleLoadData.argtypes = [ctypes.POINTER(P), P]
lib.cuModuleGetFunction.argtypes = [ctypes.POINTER(P), P, ctypes.c_char_p]
lib.cuCtxCreate_v2.argtypes = [ctypes.POINTER(P), ctypes.c_uint, ctypes.c_int]
lib.cuCtxDestroy_v2.argtypes = [P]
INFO, INFO_SIZE, ERROR, ERROR_SIZE, WALL, VERBOSE = 3, 4, 5, 6, 2, 12
PTX, CUBIN, FATBIN, OBJECT, LIBRARY, NVVM = 1, 0, 2, 3, 4, 5
lib.cuInit(0)
primary = P()
lib.cuDevicePrimaryCtxRetain(ctypes.byref(primary), 0)
lib.cuCtxSetCurrent(primary)

def options(pairs):
    keys = (ctypes.c_int * max(1, len(pairs)))(*[k for k, _ in pairs])
    values = (P * max(1, len(pairs)))(*[v for _, v in pairs])
    return len(pairs), keys, values

def create(pairs=()):
    state = P()
    n, keys, values = options(list(pairs))
    return lib.cuLinkCreate_v2(n, keys, values, ctypes.byref(state)), state, values

def add_file(state, path, kind=PTX, pairs=()):
    n, keys, values = options(list(pairs))
    return lib.cuLinkAddFile_v2(state, kind, path.encode(), n, keys, values)

def add_data(state, data, name, kind=PTX, pairs=()):
    n, keys, values = options(list(pairs))
    return lib.cuLinkAddData_v2(state, kind, data, len(data), name, n, keys, values)

def complete(state):
    image, size = P(), ctypes.c_size_t()
    rc = lib.cuLinkComplete(state, ctypes.byref(image), ctypes.byref(size))
    return rc, image.value, size.value

def wall_ms(values, index):
    return struct.unpack("<f", struct.pack("<Q", values[index] or 0)[:4])[0]
"""


def probe(driver_lib, server, body: str) -> dict:
    return run_probe(driver_lib, PROBE_SETUP + body, env={"CRICKET_SERVER": server.address})


def test_logs_sizes_and_wall_time_are_written_back(driver_lib, server, inputs):
    p = probe(driver_lib, server, f"""
info = ctypes.create_string_buffer(64)
error = ctypes.create_string_buffer(256)
rc, state, values = create([(INFO, ctypes.addressof(info)), (INFO_SIZE, 64), (ERROR, ctypes.addressof(error)),
                            (ERROR_SIZE, 256), (VERBOSE, 1), (WALL, 0)])
steps = [rc, add_file(state, {str(inputs["kernel.ptx"])!r}), values[1]]
steps.append(add_data(state, open({str(inputs["device.ptx"])!r}, "rb").read() + b"\\0", b"device half",
                      pairs=[(7, 3), (13, 1), (11, 0)]))          # optimisation level, line info, debug info
rc, image, size = complete(state)
module = P()
steps += [rc, size > 0, lib.cuModuleLoadData(ctypes.byref(module), image)]
function = P()
steps.append(lib.cuModuleGetFunction(ctypes.byref(function), module, b"scale_all"))
result.update(steps=steps, info=info.value.decode(), info_size=values[1], error=error.value.decode(),
              error_size=values[3] or 0, wall=wall_ms(values, 5), destroy=[lib.cuLinkDestroy(state), lib.cuLinkDestroy(state)])
""")
    assert p["steps"][0:2] == [0, 0] and p["steps"][2] == 64          # the 64-byte buffer is full
    assert p["steps"][3:] == [0, 0, True, 0, 0]
    assert len(p["info"]) == 63 and p["info_size"] == 64               # capped: 63 bytes and the NUL
    assert p["info"].startswith("info    : Adding PTX input ")
    assert p["error"] == "" and p["error_size"] == 0
    assert 0.0 <= p["wall"] < 60000.0
    assert p["destroy"] == [0, INVALID_HANDLE]


def test_inputs_and_options_are_refused_as_documented(driver_lib, server, inputs):
    p = probe(driver_lib, server, f"""
error = ctypes.create_string_buffer(512)
rc, state, values = create([(ERROR, ctypes.addressof(error)), (ERROR_SIZE, 512)])
steps = [rc]
steps.append(add_data(state, b"this is not PTX\\0", b"garbage"))
steps.append(error.value.decode())
steps.append(add_file(state, {str(inputs["kernel.ptx"])!r}, pairs=[(WALL, 0)]))      # linker-only option
steps.append(add_file(state, {str(inputs["kernel.ptx"])!r}, kind=9))
steps.append(add_file(state, {str(inputs["kernel.ptx"])!r}, kind=NVVM))
steps.append(add_file(state, {str(inputs["kernel.ptx"])!r}, kind=LIBRARY))     # not an archive
steps.append(add_file(state, "/nonexistent/kernel.ptx"))
steps.append(lib.cuLinkAddData_v2(state, PTX, None, 0, None, 0, None, None))
steps.append(complete(state)[0])                                  # nothing was added
lib.cuLinkDestroy(state)
steps.append(create([(10, 0)])[0])                                 # CU_JIT_FALLBACK_STRATEGY
steps.append(create([(1, 128), (9, 75)])[0])                       # THREADS_PER_BLOCK with TARGET
steps.append(create([(99, 0)])[0])                                 # not a CUjit_option
lib.cuCtxSetCurrent(None)
steps.append(create()[0])                                          # no current context
result["steps"] = steps
""")
    assert p["steps"][0:2] == [0, INVALID_PTX]
    assert p["steps"][2].startswith("error   : garbage: ")
    assert p["steps"][3:] == [INVALID_VALUE, INVALID_VALUE, NOT_SUPPORTED, INVALID_IMAGE, FILE_NOT_FOUND,
                              INVALID_VALUE, INVALID_VALUE, INVALID_VALUE, INVALID_VALUE, INVALID_VALUE,
                              INVALID_CONTEXT]


def test_unresolved_and_duplicate_symbols_fail_the_link(driver_lib, server, inputs):
    kernel, device = str(inputs["kernel.ptx"]), str(inputs["device.ptx"])
    p = probe(driver_lib, server, f"""
out = {{}}
for name, files in (("alone", [{kernel!r}]), ("twice", [{kernel!r}, {device!r}, {device!r}])):
    error = ctypes.create_string_buffer(1024)
    rc, state, values = create([(ERROR, ctypes.addressof(error)), (ERROR_SIZE, 1024)])
    for f in files:
        add_file(state, f)
    out[name] = [complete(state)[0], error.value.decode(), values[1]]
    lib.cuLinkDestroy(state)
result.update(out)
""")
    assert p["alone"][0] == INVALID_IMAGE
    assert p["alone"][1].splitlines() == [f"error   : Undefined reference to 'offset' in '{kernel}'",
                                          f"error   : Undefined reference to 'scale' in '{kernel}'"]
    assert p["alone"][2] == len(p["alone"][1]) + 1
    assert p["twice"][:2] == [INVALID_IMAGE, f"error   : Multiple definition of 'offset' in '{device}', "
                                             f"first defined in '{device}'"]


def test_fatbin_and_host_object_inputs_link(driver_lib, server, inputs):
    p = probe(driver_lib, server, f"""
info = ctypes.create_string_buffer(4096)
rc, state, values = create([(INFO, ctypes.addressof(info)), (INFO_SIZE, 4096), (VERBOSE, 1)])
steps = [rc, add_file(state, {str(inputs["kernel.o"])!r}, kind=OBJECT),
         add_data(state, open({str(inputs["device.fatbin"])!r}, "rb").read(), b"device.fatbin", kind=FATBIN)]
rc, image, size = complete(state)
module, function = P(), P()
steps += [rc, lib.cuModuleLoadData(ctypes.byref(module), image),
          lib.cuModuleGetFunction(ctypes.byref(function), module, b"scale_all")]
result.update(steps=steps, info=info.value.decode())
""")
    assert p["steps"] == [0] * 6
    assert "Adding PTX input 'device.fatbin' (compute_75)" in p["info"]
    assert "Linked 2 input(s) for sm_75" in p["info"]


def test_static_library_input_links(driver_lib, server, inputs):
    p = probe(driver_lib, server, f"""
info = ctypes.create_string_buffer(4096)
rc, state, values = create([(INFO, ctypes.addressof(info)), (INFO_SIZE, 4096), (VERBOSE, 1)])
steps = [rc, add_file(state, {str(inputs["kernel.ptx"])!r}), add_file(state, {str(inputs["libdevice.a"])!r}, kind=LIBRARY)]
rc, image, size = complete(state)
module, function = P(), P()
steps += [rc, lib.cuModuleLoadData(ctypes.byref(module), image),
          lib.cuModuleGetFunction(ctypes.byref(function), module, b"scale_all")]
result.update(steps=steps, info=info.value.decode())
""")
    assert p["steps"] == [0] * 6
    assert f"Adding PTX input '{inputs['libdevice.a']}(device.o)' (compute_75)" in p["info"]


def test_link_state_goes_with_its_context(driver_lib, server, inputs):
    p = probe(driver_lib, server, f"""
ctx = P()
lib.cuCtxCreate_v2(ctypes.byref(ctx), 0, 0)
rc, state, values = create()
steps = [rc, add_file(state, {str(inputs["device.ptx"])!r}), lib.cuCtxDestroy_v2(ctx),
         add_file(state, {str(inputs["kernel.ptx"])!r}), lib.cuLinkDestroy(state)]
result["steps"] = steps
""")
    assert p["steps"] == [0, 0, 0, INVALID_HANDLE, INVALID_HANDLE]


CUDA_PYTHON_PROGRAM = r"""
import ctypes, sys
import numpy as np
from cuda.bindings import driver as d
def ok(result, what):
    err, *values = result if isinstance(result, tuple) else (result,)
    if err != d.CUresult.CUDA_SUCCESS:
        sys.exit(f"FAIL: {what}: {err.name}")
    return values[0] if len(values) == 1 else values
ok(d.cuInit(0), "cuInit")
ctx = ok(d.cuDevicePrimaryCtxRetain(ok(d.cuDeviceGet(0), "cuDeviceGet")), "retain")
ok(d.cuCtxSetCurrent(ctx), "set")
state = ok(d.cuLinkCreate(0, [], []), "cuLinkCreate")
ok(d.cuLinkAddFile(state, d.CUjitInputType.CU_JIT_INPUT_PTX, sys.argv[1].encode(), 0, [], []), "cuLinkAddFile")
device_ptx = open(sys.argv[2], "rb").read() + b"\0"
ok(d.cuLinkAddData(state, d.CUjitInputType.CU_JIT_INPUT_PTX, device_ptx, len(device_ptx), b"device", 0, [], []),
   "cuLinkAddData")
image, size = ok(d.cuLinkComplete(state), "cuLinkComplete")
module = ok(d.cuModuleLoadData(image), "cuModuleLoadData")
ok(d.cuLinkDestroy(state), "cuLinkDestroy")
kernel = ok(d.cuModuleGetFunction(module, b"scale_all"), "cuModuleGetFunction")
n = 300
values = np.arange(n, dtype=np.float32)
dv = ok(d.cuMemAlloc(values.nbytes), "cuMemAlloc")
ok(d.cuMemcpyHtoD(dv, values.ctypes.data, values.nbytes), "cuMemcpyHtoD")
args = ((int(dv), 2.0, n), (ctypes.c_void_p, ctypes.c_float, ctypes.c_int))
ok(d.cuLaunchKernel(kernel, (n + 63) // 64, 1, 1, 64, 1, 1, 0, 0, args, 0), "cuLaunchKernel")
out = np.zeros(n, dtype=np.float32)
ok(d.cuMemcpyDtoH(out.ctypes.data, dv, out.nbytes), "cuMemcpyDtoH")
calls_ptr, calls_size = ok(d.cuModuleGetGlobal(module, b"scaled_calls"), "cuModuleGetGlobal")
calls = np.zeros(1, dtype=np.int32)
ok(d.cuMemcpyDtoH(calls.ctypes.data, calls_ptr, 4), "cuMemcpyDtoH")
print("image", size > 0, "wrong", int(np.count_nonzero(out != values * 2 + 0.5)), "calls", int(calls[0]))
"""


def test_cuda_python_links_and_runs_two_ptx_modules(driver_dir, server, inputs):
    pytest.importorskip("cuda.bindings.driver", reason="cuda-python not installed (pip install cuda-python)")
    proc = subprocess.run([sys.executable, "-c", CUDA_PYTHON_PROGRAM, str(inputs["kernel.ptx"]),
                           str(inputs["device.ptx"])], capture_output=True, text=True,
                          env=environment(driver_dir, server), timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[-1] == "image True wrong 0 calls 300"
