"""cuGetProcAddress answers each (name, CUDA version, flags) with the function of that version's
ABI, as exported under its own symbol name; unknown names answer CUDA_ERROR_NOT_FOUND."""
from __future__ import annotations

from .driver_support import run_probe

NOT_FOUND = 500
SUCCESS, SYMBOL_NOT_FOUND, VERSION_NOT_SUFFICIENT = 0, 1, 2
PTDS = 2

# (name, cudaVersion, flags) -> the exported symbol cuGetProcAddress must hand out
CASES = [
    ("cuInit", 2000, 0, "cuInit"),
    ("cuGetProcAddress", 11030, 0, "cuGetProcAddress"),
    ("cuGetProcAddress", 12000, 0, "cuGetProcAddress_v2"),
    ("cuGetProcAddress", 13000, 0, "cuGetProcAddress_v2"),
    ("cuMemcpyHtoD", 2000, 0, "cuMemcpyHtoD"),
    ("cuMemcpyHtoD", 3020, 0, "cuMemcpyHtoD_v2"),
    ("cuMemcpyHtoD", 13000, 1, "cuMemcpyHtoD_v2"),
    ("cuMemcpyHtoD", 7000, PTDS, "cuMemcpyHtoD_v2_ptds"),
    ("cuMemcpyHtoDAsync", 7000, PTDS, "cuMemcpyHtoDAsync_v2_ptsz"),
    ("cuStreamBeginCapture", 10000, PTDS, "cuStreamBeginCapture_ptsz"),
    ("cuStreamBeginCapture", 10010, PTDS, "cuStreamBeginCapture_v2_ptsz"),
    ("cuStreamBeginCapture", 10010, 0, "cuStreamBeginCapture_v2"),
    ("cuCtxCreate", 3020, 0, "cuCtxCreate_v2"),
    ("cuCtxCreate", 11040, 0, "cuCtxCreate_v3"),
    ("cuCtxCreate", 12050, 0, "cuCtxCreate_v4"),
    ("cuCtxGetDevice", 2000, 0, "cuCtxGetDevice"),
    ("cuCtxGetDevice", 13000, 0, "cuCtxGetDevice_v2"),
    ("cuDevicePrimaryCtxRelease", 11000, 0, "cuDevicePrimaryCtxRelease_v2"),
    ("cuLaunchKernel", 7000, PTDS, "cuLaunchKernel_ptsz"),
    ("cuDeviceGetAttribute", 2000, PTDS, "cuDeviceGetAttribute"),      # no per-thread twin
    ("cuGetExportTable", 3000, 0, "cuGetExportTable"),
    ("cuProfilerStart", 4000, 0, "cuProfilerStart"),
    ("cuGLCtxCreate", 3020, 0, "cuGLCtxCreate_v2"),
    ("cuGLMapBufferObject", 7000, PTDS, "cuGLMapBufferObject_v2_ptds"),
    ("cuVDPAUCtxCreate", 3020, 0, "cuVDPAUCtxCreate_v2"),
]

PROBE = """
import ctypes
cases = %r
got = []
for name, version, flags, _ in cases:
    fn = ctypes.c_void_p()
    status = ctypes.c_int(-1)
    rc = lib.cuGetProcAddress_v2(name.encode(), ctypes.byref(fn), version, flags, ctypes.byref(status))
    got.append([rc, status.value, fn.value, symbol(lib, _)])
misses = []
for name, version in (("", 0), ("cuNoSuchFunction", 13000), ("cuMemcpyHtoD", 1000), ("cuCtxCreate_v4", 13000)):
    fn = ctypes.c_void_p(1)
    status = ctypes.c_int(-1)
    rc = lib.cuGetProcAddress_v2(name.encode(), ctypes.byref(fn), version, 0, ctypes.byref(status))
    misses.append([rc, status.value, fn.value])
old = ctypes.c_void_p()
rc_old = lib.cuGetProcAddress(b"cuMemcpyHtoD", ctypes.byref(old), ctypes.c_int(13000), ctypes.c_uint64(0))
bad_flags = lib.cuGetProcAddress_v2(b"cuInit", ctypes.byref(old), 13000, 4, None)
result.update(got=got, misses=misses, old=[rc_old, old.value, symbol(lib, "cuMemcpyHtoD_v2")], bad_flags=bad_flags)
"""


def test_each_name_version_and_flag_resolves_to_its_abi_symbol(driver_lib):
    p = run_probe(driver_lib, PROBE % (CASES,))
    for (name, version, flags, expected), (rc, status, fn, address) in zip(CASES, p["got"]):
        assert (rc, status) == (0, SUCCESS), name
        assert fn == address, f"{name} v{version} flags {flags} should be {expected}"


def test_unknown_names_and_too_old_versions_answer_not_found(driver_lib):
    p = run_probe(driver_lib, PROBE % (CASES,))
    assert p["misses"] == [
        [NOT_FOUND, SYMBOL_NOT_FOUND, None],          # the empty-name probe cudart starts with
        [NOT_FOUND, SYMBOL_NOT_FOUND, None],
        [NOT_FOUND, VERSION_NOT_SUFFICIENT, None],
        [NOT_FOUND, SYMBOL_NOT_FOUND, None],          # ABI symbol names are not documented names
    ]
    assert p["old"][0] == 0 and p["old"][1] == p["old"][2]
    assert p["bad_flags"] == 1


def test_unimplemented_function_returns_not_supported_and_logs_once(driver_lib):
    p = run_probe(driver_lib, """
import ctypes
lib.cuInit(0)
result["rc"] = [lib.cuGraphicsUnregisterResource(None), lib.cuGraphicsUnregisterResource(None),
                lib.cuStreamCopyAttributes_ptsz(None, None)]
""")
    assert p["rc"] == [801, 801, 801]
    assert p["_stderr"].count("cuGraphicsUnregisterResource is not implemented") == 1
    assert p["_stderr"].count("cuStreamCopyAttributes_ptsz is not implemented") == 1


def test_error_names_and_strings_are_the_drivers(driver_lib):
    # Names from cuda.h; messages as NVIDIA's driver gives them (the runtime's message for a code
    # both define, e.g. "initialization error"; a driver-only code: its documentation's sentence).
    p = run_probe(driver_lib, """
import ctypes
out = []
for code in (0, 3, 801, 103, 999999):
    name, text = ctypes.c_char_p(), ctypes.c_char_p()
    out.append([lib.cuGetErrorName(code, ctypes.byref(name)), name.value and name.value.decode(),
                lib.cuGetErrorString(code, ctypes.byref(text)), text.value and text.value.decode()])
result["out"] = out
""")
    assert p["out"][0][:3] == [0, "CUDA_SUCCESS", 0]
    assert p["out"][1][1:] == ["CUDA_ERROR_NOT_INITIALIZED", 0, "initialization error"]
    assert p["out"][2][1] == "CUDA_ERROR_NOT_SUPPORTED"
    assert p["out"][3][0] == 1      # 103 is a runtime error code, not a CUresult
    assert p["out"][4][0] == 1 and p["out"][4][1] is None
