"""Loads the libcuda replacement by path (ctypes), allocates device memory and pinned host memory
through it, and prints JSON: the device address, whether /proc/self/maps holds an inaccessible
(---p) reservation covering it, the pointer attributes of both, and cuMemGetAddressRange."""
import ctypes
import json
import sys

lib = ctypes.CDLL(sys.argv[1])
P = ctypes.c_void_p
out = {"init": lib.cuInit(0)}
dptr = ctypes.c_uint64()
out["alloc"] = lib.cuMemAlloc_v2(ctypes.byref(dptr), ctypes.c_size_t(1 << 20))
host = P()
out["host_alloc"] = lib.cuMemAllocHost_v2(ctypes.byref(host), ctypes.c_size_t(4096))
out["dptr"] = dptr.value
reserved = False
for line in open("/proc/self/maps"):
    span, perms = line.split()[:2]
    lo, hi = (int(x, 16) for x in span.split("-"))
    if lo <= dptr.value and dptr.value + (1 << 20) <= hi:
        reserved = perms.startswith("---")
out["reserved"] = reserved


def memory_type(ptr):
    value = ctypes.c_uint(0)
    rc = lib.cuPointerGetAttribute(ctypes.byref(value), 2, ctypes.c_uint64(ptr))  # MEMORY_TYPE
    return [rc, value.value]


out["type_device"] = memory_type(dptr.value + 100)
out["type_host_pinned"] = memory_type(host.value)
out["type_pageable"] = memory_type(ctypes.addressof(dptr))
base, size = ctypes.c_uint64(), ctypes.c_size_t()
out["range"] = [lib.cuMemGetAddressRange_v2(ctypes.byref(base), ctypes.byref(size), ctypes.c_uint64(dptr.value + 5)),
                base.value == dptr.value, size.value]
out["free"] = [lib.cuMemFree_v2(ctypes.c_uint64(dptr.value)), lib.cuMemFree_v2(ctypes.c_uint64(dptr.value))]
out["free_host"] = lib.cuMemFreeHost(host)
print(json.dumps(out))
