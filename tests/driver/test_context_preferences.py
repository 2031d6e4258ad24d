"""Per-context hints answered in the library: the cache preference (kept per context, forgotten
when the primary context is released for good), the shared memory bank size (the emulated sm_75's
banks are fixed at four bytes, which the getter reports whatever was set, as cuda.h documents for
such devices) and the profiler's start and stop (no effect). All need a current context."""
from __future__ import annotations

from .driver_support import run_probe

INVALID_VALUE, INVALID_CONTEXT = 1, 201
PREFER_NONE, PREFER_SHARED, PREFER_L1, PREFER_EQUAL = 0, 1, 2, 3
FOUR_BYTE_BANKS, EIGHT_BYTE_BANKS = 1, 2

DECLARATIONS = """
import ctypes
P = ctypes.c_void_p
lib.cuCtxCreate_v2.argtypes = [ctypes.POINTER(P), ctypes.c_uint, ctypes.c_int]
lib.cuCtxDestroy_v2.argtypes = [P]
lib.cuCtxSetCurrent.argtypes = [P]
lib.cuInit(0)
def cache():
    c = ctypes.c_int(-1)
    return [lib.cuCtxGetCacheConfig(ctypes.byref(c)), c.value]
def banks():
    c = ctypes.c_int(-1)
    return [lib.cuCtxGetSharedMemConfig(ctypes.byref(c)), c.value]
"""


def test_without_a_context_every_call_is_invalid_context(driver_lib):
    p = run_probe(driver_lib, DECLARATIONS + """
result["rc"] = [lib.cuCtxSetCacheConfig(1), cache()[0], lib.cuCtxSetSharedMemConfig(1), banks()[0],
                lib.cuProfilerStart(), lib.cuProfilerStop()]
""")
    assert p["rc"] == [INVALID_CONTEXT] * 6


def test_cache_preference_is_kept_per_context(driver_lib):
    p = run_probe(driver_lib, DECLARATIONS + f"""
primary = P()
lib.cuDevicePrimaryCtxRetain(ctypes.byref(primary), 0)
lib.cuCtxSetCurrent(primary)
result["initial"] = cache()
result["set"] = [lib.cuCtxSetCacheConfig({PREFER_SHARED}), cache()]
result["unknown"] = [lib.cuCtxSetCacheConfig(4), lib.cuCtxSetCacheConfig(-1), cache()]
created = P()
lib.cuCtxCreate_v2(ctypes.byref(created), 0, 0)
result["created"] = [cache(), lib.cuCtxSetCacheConfig({PREFER_EQUAL}), cache()]
lib.cuCtxDestroy_v2(created)
lib.cuCtxSetCurrent(primary)
result["primary_again"] = cache()
result["null_out"] = lib.cuCtxGetCacheConfig(None)
""")
    assert p["initial"] == [0, PREFER_NONE]
    assert p["set"] == [0, [0, PREFER_SHARED]]
    assert p["unknown"] == [INVALID_VALUE, INVALID_VALUE, [0, PREFER_SHARED]]
    assert p["created"] == [[0, PREFER_NONE], 0, [0, PREFER_EQUAL]]
    assert p["primary_again"] == [0, PREFER_SHARED]
    assert p["null_out"] == INVALID_VALUE


def test_releasing_the_primary_context_forgets_its_preference(driver_lib):
    p = run_probe(driver_lib, DECLARATIONS + f"""
primary = P()
lib.cuDevicePrimaryCtxRetain(ctypes.byref(primary), 0)
lib.cuCtxSetCurrent(primary)
lib.cuCtxSetCacheConfig({PREFER_L1})
lib.cuDevicePrimaryCtxRelease_v2(0)
lib.cuDevicePrimaryCtxRetain(ctypes.byref(primary), 0)
result["after"] = cache()
""")
    assert p["after"] == [0, PREFER_NONE]


def test_bank_size_is_accepted_and_reported_as_four_bytes(driver_lib):
    p = run_probe(driver_lib, DECLARATIONS + f"""
primary = P()
lib.cuDevicePrimaryCtxRetain(ctypes.byref(primary), 0)
lib.cuCtxSetCurrent(primary)
result["set"] = [lib.cuCtxSetSharedMemConfig(v) for v in (0, 1, {EIGHT_BYTE_BANKS})]
result["got"] = banks()
result["unknown"] = [lib.cuCtxSetSharedMemConfig(3), lib.cuCtxGetSharedMemConfig(None)]
result["profiler"] = [lib.cuProfilerStart(), lib.cuProfilerStop(), lib.cuProfilerStop()]
""")
    assert p["set"] == [0, 0, 0]
    assert p["got"] == [0, FOUR_BYTE_BANKS]
    assert p["unknown"] == [INVALID_VALUE, INVALID_VALUE]
    assert p["profiler"] == [0, 0, 0]
