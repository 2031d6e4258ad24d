"""Library management of the runtime API (CUDA 12+): ``cudaLibraryLoadData``/``LoadFromFile``,
``cudaLibraryGetKernel``, ``cudaLibraryGetGlobal``, ``cudaLibraryGetKernelCount``,
``cudaLibraryEnumerateKernels``, ``cudaLibraryUnload``, ``cudaKernelSetAttributeForDevice``, and
``cudaFuncGetName`` for any kernel.

A library is registered like a fatbin nvcc's start-up code registers (``registry.REGISTRATIONS``,
with the kind of its image: fatbin, cubin or PTX), and each ``cudaKernel_t`` it hands out is a
registered kernel of it: ``cudaLaunchKernel`` (and the occupancy and attribute calls) take it as
they take a ``__global__`` function's address, and on each device the library is loaded where it
is first used, as the runtime does. JIT and library options are accepted and not applied (the
server compiles nothing the options could change). The driver API's twins are in ``driver_api``.
"""
from __future__ import annotations

import ctypes
import logging

from cricket.client import device_records, library_images
from cricket.client.library_images import read_image
from cricket.client.errors import CudaRuntimeError
from cricket.client.faces import implements
from cricket.client.registry import REGISTRATIONS
from cricket.client.runtime import (
    ERR_INVALID_DEVICE, ERR_INVALID_FUNCTION, ERR_INVALID_HANDLE, ERR_INVALID_VALUE, RUNTIME, SUCCESS,
    KernelRecord, hostmem,
)
from cricket.client.runtime_calls import _i32, func_set_attribute
from cricket.client.runtime_face import RUNTIME_API

log = logging.getLogger(__name__)

rt = RUNTIME

_libraries: dict[int, dict[str, int]] = {}     # library handle -> kernel name -> cudaKernel_t


def _library(handle: int) -> dict[str, int]:
    kernels = _libraries.get(handle)
    if kernels is None:
        raise CudaRuntimeError(ERR_INVALID_HANDLE, f"library {handle:#x} is not loaded")
    return kernels


def _kernel(library: int, name: str) -> int:
    """The cudaKernel_t of kernel ``name`` of ``library``, made (and resolved) at the first ask."""
    kernels = _library(library)
    kernel = kernels.get(name)
    if kernel is None:
        kernel = rt.new_handle()
        rt.kernels[kernel] = KernelRecord(host_fun=kernel, handle=library, name=name)
        try:
            rt.kernel(kernel)          # resolved on the current device: an unknown name fails here
        except BaseException:
            del rt.kernels[kernel]
            raise
        kernels[name] = kernel
    return kernel


def _load(plibrary: int, image: bytes, kind: int) -> int:
    handle = REGISTRATIONS.add_fatbin(0, 0, 0, image, kind=kind)
    try:
        rt.module(handle)              # loaded now on the current device, so a bad image fails here
    except BaseException:
        REGISTRATIONS.remove(handle)
        raise
    _libraries[handle] = {}
    hostmem.store_u64(plibrary, handle)
    return SUCCESS


@implements(RUNTIME_API, "cudaLibraryLoadData")
def library_load_data(plibrary: int, code: int, jit_options: int, jit_values: int, num_jit: int,
                      library_options: int, library_values: int, num_library: int) -> int:
    if not plibrary or not code:
        return ERR_INVALID_VALUE
    return _load(plibrary, *read_image(code))


@implements(RUNTIME_API, "cudaLibraryLoadFromFile")
def library_load_from_file(plibrary: int, file_name: int, jit_options: int, jit_values: int, num_jit: int,
                           library_options: int, library_values: int, num_library: int) -> int:
    if not plibrary or not file_name:
        return ERR_INVALID_VALUE
    path = ctypes.string_at(file_name)
    try:
        buffer = library_images.read_library_file(path)
    except (OSError, ValueError) as exc:
        log.error("cudaLibraryLoadFromFile: cannot read %r: %s", path, exc)
        return ERR_INVALID_VALUE
    return _load(plibrary, *read_image(ctypes.addressof(buffer)))


@implements(RUNTIME_API, "cudaLibraryUnload")
def library_unload(library: int) -> int:
    _library(library)
    rt.drain()
    conn = rt.conn
    for key in [k for k in rt.modules if k == library or (isinstance(k, tuple) and k[0] == library)]:
        conn._check(conn._stub.CR_MODULE_UNLOAD(rt.modules[key]), "cudaLibraryUnload")
    for kernel in _libraries.pop(library).values():
        rt.kernels.pop(kernel, None)
    REGISTRATIONS.remove(library)
    rt.modules.pop(library, None)
    device_records.forget_fatbin(rt, library)
    return SUCCESS


@implements(RUNTIME_API, "cudaLibraryGetKernel")
def library_get_kernel(pkernel: int, library: int, name_ptr: int) -> int:
    if not pkernel or not name_ptr:
        return ERR_INVALID_VALUE
    hostmem.store_u64(pkernel, _kernel(library, ctypes.string_at(name_ptr).decode(errors="surrogateescape")))
    return SUCCESS


def kernel_names(library: int) -> list[str]:
    """The kernels in a library's image, in the image's order."""
    entry = REGISTRATIONS.get(library)
    return library_images.kernel_names(bytes(entry.image or b""), entry.kind)


@implements(RUNTIME_API, "cudaLibraryGetKernelCount")
def library_get_kernel_count(count: int, library: int) -> int:
    if not count:
        return ERR_INVALID_VALUE
    _library(library)
    hostmem.store_u32(count, len(kernel_names(library)))
    return SUCCESS


@implements(RUNTIME_API, "cudaLibraryEnumerateKernels")
def library_enumerate_kernels(kernels: int, count: int, library: int) -> int:
    _library(library)
    names = kernel_names(library)
    count &= 0xFFFFFFFF
    if not kernels or count == 0 or count > len(names):
        return ERR_INVALID_VALUE
    hostmem.store_i64s(kernels, [_kernel(library, name) for name in names[:count]])
    return SUCCESS


@implements(RUNTIME_API, "cudaLibraryGetGlobal")
def library_get_global(dptr: int, size: int, library: int, name_ptr: int) -> int:
    if not name_ptr or not (dptr or size):
        return ERR_INVALID_VALUE
    _library(library)
    library_images.store_global(rt.module(library), ctypes.string_at(name_ptr).decode(errors="surrogateescape"),
                                dptr, size, "cudaLibraryGetGlobal")
    return SUCCESS


@implements(RUNTIME_API, "cudaKernelSetAttributeForDevice")
def kernel_set_attribute_for_device(kernel: int, attribute: int, value: int, device: int) -> int:
    if not 0 <= _i32(device) < len(rt.devices):
        return ERR_INVALID_DEVICE
    return func_set_attribute(kernel, attribute, value)


@implements(RUNTIME_API, "cudaFuncGetName")
def func_get_name(name: int, func: int) -> int:
    """The kernel's (mangled) name, in memory that lives as long as the process."""
    if not name or not func:
        return ERR_INVALID_VALUE
    record = rt.kernels.get(func)
    if record is None:
        return ERR_INVALID_FUNCTION
    hostmem.store_u64(name, library_images.c_name(record.name))
    return SUCCESS
