"""A fake of ``cuda.bindings.driver`` that stands in for a GPU, so the cuda backend's own code
(call sequences, result unpacking, the packed parameter buffer) runs where no GPU exists.

It follows cuda-python's conventions: every call returns a tuple whose first item is a CUresult,
handles are small objects, ``extra`` of cuLaunchKernel is the address of a void* array. Memory is
host memory; the only "kernel" it can run is ``vadd(const float*, const float*, float*, int)``,
whose parameters it reads from the launch's parameter buffer exactly as the driver would.
"""
from __future__ import annotations

import ctypes
import enum
import itertools
import struct

import numpy as np


class CUresult(enum.IntEnum):
    CUDA_SUCCESS = 0
    CUDA_ERROR_INVALID_VALUE = 1
    CUDA_ERROR_NOT_FOUND = 500
    CUDA_ERROR_NOT_READY = 600


class CUdevice_attribute(enum.IntEnum):
    CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1
    CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76
    CU_DEVICE_ATTRIBUTE_MAX = 77


class CUfunction_attribute(enum.IntEnum):
    CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0
    CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1
    CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES = 2
    CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3
    CU_FUNC_ATTRIBUTE_NUM_REGS = 4
    CU_FUNC_ATTRIBUTE_PTX_VERSION = 5
    CU_FUNC_ATTRIBUTE_BINARY_VERSION = 6


class CUjitInputType(enum.IntEnum):
    CU_JIT_INPUT_CUBIN = 0
    CU_JIT_INPUT_PTX = 1


CU_LAUNCH_PARAM_END_AS_INT = 0
CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT = 1
CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT = 2

OK = CUresult.CUDA_SUCCESS
ATTRIBUTES = {1: 1024, 10: 32, 16: 132, 75: 9, 76: 0}
TOTAL = 1 << 30
VADD_PARAMS = [(0, 8), (8, 8), (16, 8), (24, 4)]


class _Handle:
    def __init__(self, name: str) -> None:
        self.name = name


class CUuuid:
    bytes = b"fake-gpu-uuid-16"


class FakeDriver:
    """One fake GPU. ``calls`` records the driver functions the backend used, in order."""

    def __init__(self) -> None:
        self.memory: dict[int, bytearray] = {}
        self._next = itertools.count(0x7000_0000_0000, 1 << 20)
        self.calls: list[str] = []
        self.current = None
        self.launches: list[tuple] = []
        self.contexts: list[_Handle] = []        # contexts created (not primary) and not destroyed
        self.CUresult = CUresult
        self.CUdevice_attribute = CUdevice_attribute
        self.CUfunction_attribute = CUfunction_attribute
        self.CUjitInputType = CUjitInputType
        self.link_inputs: list[tuple[int, bytes, bytes]] = []     # (input type, data, name) of the last link
        self._linked = ctypes.create_string_buffer(1)
        self.CU_LAUNCH_PARAM_END_AS_INT = CU_LAUNCH_PARAM_END_AS_INT
        self.CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT = CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT
        self.CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT = CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT

    def __getattr__(self, name: str):
        raise AttributeError(f"the fake driver has no {name}: the backend called something new")

    def _log(self, name: str) -> None:
        self.calls.append(name)

    def _range(self, ptr: int, size: int) -> tuple[bytearray, int]:
        for base, buf in self.memory.items():
            if base <= ptr and ptr + size <= base + len(buf):
                return buf, ptr - base
        raise ValueError(f"fake GPU: {ptr:#x}+{size} is not allocated")

    # context and devices
    def cuInit(self, flags):
        self._log("cuInit")
        return (OK,)

    def cuDeviceGetCount(self):
        return OK, 1

    def cuDeviceGet(self, ordinal):
        return OK, _Handle(f"dev{ordinal}")

    def cuDevicePrimaryCtxRetain(self, dev):
        self._log("cuDevicePrimaryCtxRetain")
        return OK, _Handle("ctx")

    def cuDevicePrimaryCtxRelease(self, dev):
        self._log("cuDevicePrimaryCtxRelease")
        return (OK,)

    def cuCtxCreate(self, params, flags, dev):
        self._log("cuCtxCreate")
        ctx = _Handle(f"own-ctx-{len(self.contexts)}")
        self.contexts.append(ctx)
        self.current = ctx
        return OK, ctx

    def cuCtxDestroy(self, ctx):
        self._log("cuCtxDestroy")
        self.contexts.remove(ctx)
        return (OK,)

    def cuCtxSetCurrent(self, ctx):
        self._log("cuCtxSetCurrent")
        self.current = ctx
        return (OK,)

    def cuDeviceGetName(self, length, dev):
        return OK, b"Fake GPU\0\0\0"

    def cuDeviceGetUuid(self, dev):
        return OK, CUuuid()

    def cuDeviceTotalMem(self, dev):
        return OK, TOTAL

    def cuDeviceGetAttribute(self, attr, dev):
        return OK, ATTRIBUTES.get(int(attr), 0)

    def cuDriverGetVersion(self):
        return OK, 13000

    # memory
    def cuMemAlloc(self, size):
        self._log("cuMemAlloc")
        ptr = next(self._next)
        self.memory[ptr] = bytearray(size)
        return OK, ptr

    def cuMemFree(self, ptr):
        self._log("cuMemFree")
        return (OK,) if self.memory.pop(int(ptr), None) is not None else (CUresult.CUDA_ERROR_INVALID_VALUE,)

    def cuMemGetInfo(self):
        return OK, TOTAL - sum(len(b) for b in self.memory.values()), TOTAL

    def cuMemcpyHtoD(self, dst, src, n):
        self._log("cuMemcpyHtoD")
        buf, off = self._range(dst, n)
        # cuda-python takes a host address as an int as well as a buffer
        buf[off:off + n] = ctypes.string_at(src, n) if isinstance(src, int) else bytes(src)[:n]
        return (OK,)

    def cuMemcpyHtoDAsync(self, dst, src, n, stream):
        self._log("cuMemcpyHtoDAsync")
        return self.cuMemcpyHtoD(dst, src, n)

    def cuMemcpyDtoH(self, dst, src, n):
        self._log("cuMemcpyDtoH")
        buf, off = self._range(src, n)
        if isinstance(dst, int):
            ctypes.memmove(dst, bytes(buf[off:off + n]), n)
        else:
            dst[:n] = buf[off:off + n]
        return (OK,)

    def cuMemcpyDtoHAsync(self, dst, src, n, stream):
        self._log("cuMemcpyDtoHAsync")
        return self.cuMemcpyDtoH(dst, src, n)

    def cuMemcpyDtoD(self, dst, src, n):
        self._log("cuMemcpyDtoD")
        s, so = self._range(src, n)
        d, do = self._range(dst, n)
        d[do:do + n] = s[so:so + n]
        return (OK,)

    def _memset(self, width, dst, value, count):
        buf, off = self._range(dst, width * count)
        buf[off:off + width * count] = (value & ((1 << (8 * width)) - 1)).to_bytes(width, "little") * count
        return (OK,)

    def cuMemsetD8(self, dst, value, count):
        self._log("cuMemsetD8")
        return self._memset(1, dst, value, count)

    def cuMemsetD16(self, dst, value, count):
        self._log("cuMemsetD16")
        return self._memset(2, dst, value, count)

    def cuMemsetD32(self, dst, value, count):
        self._log("cuMemsetD32")
        return self._memset(4, dst, value, count)

    def cuMemsetD32Async(self, dst, value, count, stream):
        self._log("cuMemsetD32Async")
        return self._memset(4, dst, value, count)

    # modules
    def cuModuleLoadData(self, image):
        self._log("cuModuleLoadData")
        return OK, _Handle(bytes(image))

    # JIT linking: the "cubin" names the inputs it was linked from
    def cuLinkCreate(self, num_options, options, values):
        self._log("cuLinkCreate")
        self.link_inputs = []
        return OK, _Handle("link")

    def cuLinkAddData(self, state, input_type, data, size, name, num_options, options, values):
        self._log("cuLinkAddData")
        self.link_inputs.append((int(input_type), bytes(data[:size]), name))
        return (OK,)

    def cuLinkComplete(self, state):
        self._log("cuLinkComplete")
        image = b"linked " + b",".join(name for _, _, name in self.link_inputs)
        self._linked = ctypes.create_string_buffer(image, len(image))
        return OK, ctypes.addressof(self._linked), len(image)

    def cuLinkDestroy(self, state):
        self._log("cuLinkDestroy")
        return (OK,)

    def cuModuleUnload(self, module):
        self._log("cuModuleUnload")
        return (OK,)

    def cuModuleGetFunction(self, module, name):
        if name not in module.name:
            return CUresult.CUDA_ERROR_NOT_FOUND, None
        return OK, _Handle(name.decode())

    def cuFuncGetParamInfo(self, func, index):
        if func.name != "vadd" or index >= len(VADD_PARAMS):
            return CUresult.CUDA_ERROR_INVALID_VALUE, 0, 0
        return (OK, *VADD_PARAMS[index])

    def cuFuncGetAttribute(self, attr, func):
        return OK, {0: 1024, 4: 12, 5: 90, 6: 90}.get(int(attr), 0)

    def cuModuleGetGlobal(self, module, name):
        return CUresult.CUDA_ERROR_NOT_FOUND, 0, 0

    def cuLaunchKernel(self, f, gx, gy, gz, bx, by, bz, shared, stream, kernel_params, extra):
        self._log("cuLaunchKernel")
        assert kernel_params is None, "the backend passes its parameters through extra"
        words = (ctypes.c_void_p * 5).from_address(extra)
        assert (words[0], words[2], words[4]) == (CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT,
                                                  CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT, None)
        size = ctypes.c_size_t.from_address(words[3]).value
        params = ctypes.string_at(words[1], size)
        self.launches.append(((gx, gy, gz), (bx, by, bz), shared, stream, params))
        if f.name == "vadd":
            a, b, c, n = struct.unpack("<QQQi", params)
            threads = min(n, gx * bx)
            av = np.frombuffer(self._read(a, 4 * threads), np.float32)
            bv = np.frombuffer(self._read(b, 4 * threads), np.float32)
            buf, off = self._range(c, 4 * threads)
            buf[off:off + 4 * threads] = (av + bv).tobytes()
        return (OK,)

    def _read(self, ptr, n):
        buf, off = self._range(ptr, n)
        return bytes(buf[off:off + n])

    # streams, events, synchronisation
    def cuStreamCreate(self, flags):
        self._log("cuStreamCreate")
        return OK, _Handle("stream")

    def cuStreamDestroy(self, stream):
        self._log("cuStreamDestroy")
        return (OK,)

    def cuStreamSynchronize(self, stream):
        self._log("cuStreamSynchronize")
        return (OK,)

    def cuStreamQuery(self, stream):
        return (OK,)

    def cuStreamWaitEvent(self, stream, event, flags):
        self._log("cuStreamWaitEvent")
        return (OK,)

    def cuEventCreate(self, flags):
        return OK, _Handle("event")

    def cuEventDestroy(self, event):
        return (OK,)

    def cuEventRecord(self, event, stream):
        self._log("cuEventRecord")
        return (OK,)

    def cuEventSynchronize(self, event):
        return (OK,)

    def cuEventQuery(self, event):
        return (CUresult.CUDA_ERROR_NOT_READY,)

    def cuEventElapsedTime(self, start, end):
        return OK, 0.25

    def cuCtxSynchronize(self):
        self._log("cuCtxSynchronize")
        return (OK,)
