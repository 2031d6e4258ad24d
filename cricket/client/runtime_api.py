"""The Python side of the CUDA runtime API: what the libcudart shim's calls end up in.

Path of a call: application → ``libcricket-cudart.so`` (C, ``cext/preload/``) → a ``cdef api``
function of ``cricket._cext.cudart_api`` (converts C arguments to Python objects, holds the GIL)
→ the function registered here under the CUDA name → its return value back to C.

**Registry.** ``IMPLEMENTATIONS`` (the table of ``runtime_face.RUNTIME_API``) maps a CUDA function
name to a Python callable. The Cython layer
looks the name up at every call, so replacing an entry (``register(name, fn, replace=True)``)
takes effect at once, with no C change. A name the shim forwards but that has no entry here
answers ``cudaErrorNotSupported`` and is logged once. ``FORWARDED`` lists the names the shim
forwards today; every other libcudart export is a C stub returning ``cudaErrorNotSupported``.

**Calling convention** (what the Cython layer passes and expects):

- pointers arrive as ``int`` addresses (0 for NULL), C strings as ``bytes`` (``None`` for NULL);
- a ``cudaError_t`` function with out-parameters returns ``(error_code, value, ...)``; the Cython
  layer writes the values through the out-pointers only when the code is 0;
- ``cudaGetErrorString``/``Name`` return ``bytes`` (kept alive by the Cython layer for the C caller);
- an exception escaping an implementation is logged and becomes ``cudaErrorUnknown`` (999), or the
  neutral value for functions that return no error code.

The functions of ``cext/preload/forward_runtime.c`` arrive through the generic entry
``cricket_call``: every C argument as an unsigned 64-bit ``int``, out-parameters written by the
implementation itself (``hostmem``), the ``cudaError_t`` returned; they are registered in
``runtime_face.RUNTIME_API`` by the feature modules this module imports (``runtime_calls``).
The registration entries below also index kernels and variables by host address in the process
state (``runtime.RUNTIME``).

Signatures of the entries defined here:

=============================  ===============================================================  ==============
name                           arguments                                                        returns
=============================  ===============================================================  ==============
cudaGetErrorString             code                                                             bytes
cudaGetErrorName               code                                                             bytes
cudaRuntimeGetVersion          (none)                                                           (err, version)
__cudaRegisterFatBinary        wrapper, wrapper_magic, wrapper_version, image (bytes or None)   handle (int ≠ 0)
__cudaRegisterFatBinaryEnd     handle                                                           None
__cudaRegisterFunction         handle, host_fun, device_fun, device_name, thread_limit          None
__cudaRegisterVar              handle, host_var, device_address, device_name, ext, size,        None
                               constant, global_
__cudaRegisterManagedVar       same as __cudaRegisterVar (``host_var`` is the address of the    None
                               host pointer)
__cudaUnregisterFatBinary      handle                                                           None
__cudaInitModule               handle                                                           bool
=============================  ===============================================================  ==============
"""
from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from cricket.cudafacts.cudart_errors import CODES, CUDART_VERSION, ERRORS, UNRECOGNIZED
from cricket.client.errors import RuntimeApiError  # noqa: F401  (part of this module's API)
from cricket.client import device_records
from cricket.client.faces import implements
from cricket.client.registry import (  # noqa: F401  (part of this module's API)
    HANDLE_SIZE, REGISTRATIONS, RegisteredFatbin, RegisteredFunction, RegisteredVar, Registrations,
)
from cricket.client.runtime import RUNTIME, KernelRecord, VarRecord
from cricket.client.runtime_face import RUNTIME_API
# The feature modules of the runtime face: importing them registers their functions.
from cricket.client import runtime_calls  # noqa: F401
from cricket.client import arrays_runtime  # noqa: F401  (CUDA arrays, textures, surfaces)
from cricket.client import graphs_runtime  # graphs, stream capture, host functions (after runtime_calls)
from cricket.client import cooperative, device_ids, peers, stream_priorities  # noqa: F401  (forward_devices.c)
from cricket.client import libraries  # noqa: F401  (forward_libraries.c)
from cricket.client import mempool  # noqa: F401  (stream-ordered memory, memory pools)
from cricket.client import managed  # noqa: F401  (managed memory)
from cricket.client import ipc  # noqa: F401  (IPC memory and event handles)

log = logging.getLogger(__name__)

CUDA_SUCCESS = 0
CUDA_ERROR_NOT_SUPPORTED = CODES["cudaErrorNotSupported"]
CUDA_ERROR_UNKNOWN = CODES["cudaErrorUnknown"]

# The functions the C shim forwards to Python (cext/preload/forward.c, forward_runtime.c).
FORWARDED: tuple[str, ...] = (
    "cudaGetErrorString", "cudaGetErrorName", "cudaRuntimeGetVersion", "__cudaRegisterFatBinary",
    "__cudaRegisterFatBinaryEnd", "__cudaUnregisterFatBinary", "__cudaRegisterFunction",
    "__cudaRegisterVar", "__cudaRegisterManagedVar", "__cudaInitModule", "cudaGetLastError",
    "cudaPeekAtLastError", "cudaGetDeviceCount", "cudaGetDevice", "cudaSetDevice",
    "cudaInitDevice", "cudaSetDeviceFlags", "cudaGetDeviceFlags", "cudaDeviceGetAttribute",
    "cudaDeviceSynchronize", "cudaDeviceReset", "cudaMemGetInfo", "cudaDriverGetVersion",
    "cudaDeviceGetStreamPriorityRange", "cudaDeviceSetCacheConfig", "cudaDeviceGetCacheConfig",
    "cudaDeviceSetSharedMemConfig", "cudaDeviceGetSharedMemConfig", "cudaProfilerStart",
    "cudaProfilerStop", "cudaDeviceGetLimit",
    "cudaDeviceSetLimit", "cudaGetDeviceProperties", "cudaMalloc", "cudaMallocPitch", "cudaFree",
    "cudaMallocHost", "cudaHostAlloc", "cudaFreeHost", "cudaHostRegister", "cudaHostUnregister",
    "cudaHostGetFlags", "cudaHostGetDevicePointer", "cudaMemcpy", "cudaMemcpy_ptds", "cudaMemcpyAsync", "cudaMemcpyAsync_ptsz",
    "cudaMemcpy2D", "cudaMemcpy2D_ptds", "cudaMemcpy2DAsync", "cudaMemcpy2DAsync_ptsz",
    "cudaMemcpyToSymbol", "cudaMemcpyToSymbol_ptds", "cudaMemcpyToSymbolAsync",
    "cudaMemcpyToSymbolAsync_ptsz", "cudaMemcpyFromSymbol", "cudaMemcpyFromSymbol_ptds",
    "cudaMemcpyFromSymbolAsync", "cudaMemcpyFromSymbolAsync_ptsz", "cudaGetSymbolAddress",
    "cudaGetSymbolSize", "cudaMemset", "cudaMemset_ptds", "cudaMemsetAsync",
    "cudaMemsetAsync_ptsz", "cudaStreamCreate", "cudaStreamCreateWithFlags",
    "cudaStreamCreateWithPriority", "cudaStreamDestroy", "cudaStreamSynchronize",
    "cudaStreamSynchronize_ptsz", "cudaStreamQuery", "cudaStreamQuery_ptsz", "cudaStreamWaitEvent",
    "cudaStreamWaitEvent_ptsz", "cudaEventCreate", "cudaEventCreateWithFlags", "cudaEventRecord",
    "cudaEventRecord_ptsz", "cudaEventRecordWithFlags", "cudaEventRecordWithFlags_ptsz",
    "cudaEventSynchronize", "cudaEventQuery", "cudaEventElapsedTime", "cudaEventDestroy",
    "__cudaPushCallConfiguration", "__cudaPopCallConfiguration", "__cudaGetKernel",
    "cudaGetKernel", "__cudaLaunchKernel", "__cudaLaunchKernel_ptsz", "cudaLaunchKernel",
    "cudaLaunchKernel_ptsz", "cudaLaunchKernelExC", "cudaLaunchKernelExC_ptsz",
    "cudaFuncGetAttributes", "cudaFuncSetAttribute", "cudaFuncSetCacheConfig", "cudaFuncSetSharedMemConfig",
    "cudaOccupancyMaxActiveBlocksPerMultiprocessor",
    "cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", "cudaPointerGetAttributes",
)
# CUDA arrays, textures and surfaces (cricket/client/arrays_runtime.py)
FORWARDED += (
    "cudaCreateChannelDesc", "cudaMallocArray", "cudaMalloc3DArray", "cudaMallocMipmappedArray",
    "cudaGetMipmappedArrayLevel", "cudaFreeArray", "cudaFreeMipmappedArray", "cudaGetChannelDesc", "cudaMemcpy3D",
    "cudaMemcpy3D_ptds", "cudaMemcpy3DAsync", "cudaMemcpy3DAsync_ptsz", "cudaMemcpy2DToArray",
    "cudaMemcpy2DFromArray", "cudaMemcpyToArray", "cudaMemcpyFromArray", "cudaCreateTextureObject",
    "cudaCreateSurfaceObject", "cudaDestroyTextureObject", "cudaDestroySurfaceObject",
    "cudaGetTextureObjectResourceDesc", "cudaGetSurfaceObjectResourceDesc")
FORWARDED += graphs_runtime.SHIM_EXPORTS
# Several devices (cricket/client/peers.py, device_ids.py)
FORWARDED += (
    "cudaDeviceCanAccessPeer", "cudaDeviceEnablePeerAccess", "cudaDeviceDisablePeerAccess",
    "cudaDeviceGetP2PAttribute", "cudaMemcpyPeer", "cudaMemcpyPeerAsync", "cudaDeviceGetPCIBusId",
    "cudaDeviceGetByPCIBusId", "cudaStreamGetPriority", "cudaStreamGetPriority_ptsz",
    "cudaLaunchCooperativeKernel", "cudaLaunchCooperativeKernel_ptsz")
# Libraries (cricket/client/libraries.py)
FORWARDED += (
    "cudaLibraryLoadData", "cudaLibraryLoadFromFile", "cudaLibraryUnload", "cudaLibraryGetKernel",
    "cudaLibraryGetGlobal", "cudaLibraryGetKernelCount", "cudaLibraryEnumerateKernels",
    "cudaKernelSetAttributeForDevice", "cudaFuncGetName")
# Stream-ordered memory and memory pools (cricket/client/mempool.py)
FORWARDED += (
    "cudaMallocAsync", "cudaMallocAsync_ptsz", "cudaFreeAsync", "cudaFreeAsync_ptsz", "cudaMallocFromPoolAsync",
    "cudaMallocFromPoolAsync_ptsz", "cudaMemPoolCreate", "cudaMemPoolDestroy",
    "cudaMemPoolTrimTo", "cudaMemPoolSetAttribute", "cudaMemPoolGetAttribute", "cudaMemPoolSetAccess",
    "cudaMemPoolGetAccess", "cudaDeviceGetDefaultMemPool", "cudaDeviceGetMemPool", "cudaDeviceSetMemPool",
    "cudaMemGetDefaultMemPool", "cudaMemGetMemPool", "cudaMemSetMemPool")
# Managed memory (cricket/client/managed.py)
FORWARDED += ("cudaMallocManaged", "cudaMemPrefetchAsync", "cudaMemPrefetchAsync_ptsz", "cudaMemAdvise",
              "cudaStreamAttachMemAsync", "cudaStreamAttachMemAsync_ptsz")
# IPC between client processes of one server (cricket/client/ipc.py)
FORWARDED += ("cudaIpcGetMemHandle", "cudaIpcOpenMemHandle", "cudaIpcCloseMemHandle", "cudaIpcGetEventHandle",
              "cudaIpcOpenEventHandle")

IMPLEMENTATIONS: dict[str, Callable[..., Any]] = RUNTIME_API.implementations
register = RUNTIME_API.register


lookup = RUNTIME_API.lookup


def implemented() -> list[str]:
    """The forwarded names that have a Python implementation (what works through the shim now)."""
    return [n for n in FORWARDED if n in IMPLEMENTATIONS]


# ------------------------------------------------------------------ errors and versions

_NAMES = {code: name.encode() for code, (name, _) in ERRORS.items()}
_MESSAGES = {code: message.encode() for code, (_, message) in ERRORS.items()}
_UNRECOGNIZED = UNRECOGNIZED.encode()


@implements(RUNTIME_API, "cudaGetErrorString", guarded=False)
def cuda_get_error_string(code: int) -> bytes:
    return _MESSAGES.get(code, _UNRECOGNIZED)


@implements(RUNTIME_API, "cudaGetErrorName", guarded=False)
def cuda_get_error_name(code: int) -> bytes:
    return _NAMES.get(code, _UNRECOGNIZED)


@implements(RUNTIME_API, "cudaRuntimeGetVersion", guarded=False)
def cuda_runtime_get_version() -> tuple[int, int]:
    return CUDA_SUCCESS, CUDART_VERSION


@implements(RUNTIME_API, "__cudaRegisterFatBinary", guarded=False)
def register_fat_binary(wrapper: int, wrapper_magic: int, wrapper_version: int,
                        image: bytes | memoryview | None) -> int:
    return REGISTRATIONS.add_fatbin(wrapper, wrapper_magic, wrapper_version, image)


@implements(RUNTIME_API, "__cudaRegisterFatBinaryEnd", guarded=False)
def register_fat_binary_end(handle: int) -> None:
    REGISTRATIONS.get(handle).ended = True


@implements(RUNTIME_API, "__cudaRegisterFunction", guarded=False)
def register_function(handle: int, host_fun: int, device_fun: bytes | None,
                      device_name: bytes | None, thread_limit: int) -> None:
    REGISTRATIONS.get(handle).functions.append(
        RegisteredFunction(host_fun, device_fun, device_name, thread_limit))
    name = (device_name or device_fun or b"").decode(errors="replace")
    RUNTIME.kernels[host_fun] = KernelRecord(host_fun, handle, name)


@implements(RUNTIME_API, "__cudaRegisterVar", guarded=False)
def register_var(handle: int, host_var: int, device_address: bytes | None, device_name: bytes | None,
                 ext: int, size: int, constant: int, global_: int) -> None:
    REGISTRATIONS.get(handle).variables.append(
        RegisteredVar(host_var, device_address, device_name, ext, size, bool(constant), bool(global_)))
    name = (device_name or device_address or b"").decode(errors="replace")
    RUNTIME.vars[host_var] = VarRecord(host_var, handle, name, size)


@implements(RUNTIME_API, "__cudaRegisterManagedVar", guarded=False)
def register_managed_var(handle: int, host_var: int, device_address: bytes | None,
                         device_name: bytes | None, ext: int, size: int, constant: int,
                         global_: int) -> None:
    entry = REGISTRATIONS.get(handle)
    name = (device_name or b"?").decode(errors="replace")
    entry.variables.append(RegisteredVar(host_var, device_address, device_name, ext, size,
                                         bool(constant), bool(global_), managed=True))
    log.debug("__managed__ variable %s: placed at __cudaInitModule (cricket.client.managed)", name)


@implements(RUNTIME_API, "__cudaUnregisterFatBinary", guarded=False)
def unregister_fat_binary(handle: int) -> None:
    REGISTRATIONS.remove(handle)
    # Nothing is sent: the session's modules go when the connection closes at exit.
    for table in (RUNTIME.kernels, RUNTIME.vars):
        for key in [k for k, rec in table.items() if rec.handle == handle]:
            del table[key]
    RUNTIME.modules.pop(handle, None)
    device_records.forget_fatbin(RUNTIME, handle)


@implements(RUNTIME_API, "__cudaInitModule", guarded=False)
def init_module(handle: int) -> bool:
    entry = REGISTRATIONS.get(handle)
    if entry.refused:
        log.error("cannot initialise the module of fatbin %#x: %s", handle, "; ".join(entry.refused))
        return False
    variables = [v for v in entry.variables if v.managed]
    if variables:
        try:
            managed.place_module_variables(handle, variables)
        except Exception as exc:
            log.error("cannot place the __managed__ variables of fatbin %#x: %s", handle, exc)
            return False
    return True

