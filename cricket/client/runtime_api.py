"""The Python side of the CUDA runtime API: what the libcudart shim's calls end up in.

Path of a call: application → ``libcricket-cudart.so`` (C, ``cext/preload/``) → a ``cdef api``
function of ``cricket._cext.cudart_api`` (converts C arguments to Python objects, holds the GIL)
→ the function registered here under the CUDA name → its return value back to C.

**Registry.** ``IMPLEMENTATIONS`` maps a CUDA function name to a Python callable. The Cython layer
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
implementation itself (``hostmem``), the ``cudaError_t`` returned; they are registered by
``cricket.client.runtime_calls`` (imported at the end of this module), which also wraps the
registration entries below to index kernels and variables by host address.

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

import ctypes
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from cricket.cudafacts.cudart_errors import CODES, CUDART_VERSION, ERRORS, UNRECOGNIZED

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

IMPLEMENTATIONS: dict[str, Callable[..., Any]] = {}

F = TypeVar("F", bound=Callable[..., Any])


class RuntimeApiError(Exception):
    """Misuse of the registry (a name registered twice, an unknown name)."""


def register(name: str, fn: Callable[..., Any], *, replace: bool = False) -> None:
    """Make ``fn`` the implementation of the CUDA function ``name``."""
    if name in IMPLEMENTATIONS and not replace:
        raise RuntimeApiError(f"{name} already has an implementation ({IMPLEMENTATIONS[name]!r}); "
                              "pass replace=True to swap it")
    IMPLEMENTATIONS[name] = fn


def implements(name: str) -> Callable[[F], F]:
    """Decorator form of ``register``."""
    def decorate(fn: F) -> F:
        register(name, fn)
        return fn
    return decorate


def lookup(name: str) -> Callable[..., Any] | None:
    return IMPLEMENTATIONS.get(name)


def implemented() -> list[str]:
    """The forwarded names that have a Python implementation (what works through the shim now)."""
    return [n for n in FORWARDED if n in IMPLEMENTATIONS]


# ------------------------------------------------------------------ errors and versions

_NAMES = {code: name.encode() for code, (name, _) in ERRORS.items()}
_MESSAGES = {code: message.encode() for code, (_, message) in ERRORS.items()}
_UNRECOGNIZED = UNRECOGNIZED.encode()


@implements("cudaGetErrorString")
def cuda_get_error_string(code: int) -> bytes:
    return _MESSAGES.get(code, _UNRECOGNIZED)


@implements("cudaGetErrorName")
def cuda_get_error_name(code: int) -> bytes:
    return _NAMES.get(code, _UNRECOGNIZED)


@implements("cudaRuntimeGetVersion")
def cuda_runtime_get_version() -> tuple[int, int]:
    return CUDA_SUCCESS, CUDART_VERSION


# ------------------------------------------------------------------ registration bookkeeping

# cudart-internal code may look into a fatbin handle; Cricket hands out zeroed 0x58-byte blocks.
HANDLE_SIZE = 0x58


@dataclass
class RegisteredFunction:
    host_fun: int
    device_fun: bytes | None
    device_name: bytes | None
    thread_limit: int


@dataclass
class RegisteredVar:
    host_var: int
    device_address: bytes | None
    device_name: bytes | None
    ext: int
    size: int
    constant: bool
    global_: bool
    managed: bool = False


@dataclass
class RegisteredFatbin:
    """What the application registered for one fatbin (nothing is sent anywhere yet)."""
    handle: int
    wrapper: int
    wrapper_magic: int
    wrapper_version: int
    image: bytes | memoryview | None   # the registered container, read where it is mapped
    ended: bool = False
    functions: list[RegisteredFunction] = field(default_factory=list)
    variables: list[RegisteredVar] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)   # why this module cannot be used


class Registrations:
    """Fatbins, functions and variables registered by nvcc-generated code, keyed by handle."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._fatbins: dict[int, RegisteredFatbin] = {}
        self._blocks: dict[int, ctypes.Array] = {}
        self.unregistered = 0

    def fatbins(self) -> list[RegisteredFatbin]:
        with self._lock:
            return list(self._fatbins.values())

    def get(self, handle: int) -> RegisteredFatbin:
        # No lock: a dict lookup is atomic, and this runs for each of the ~24,000 functions a
        # PyTorch-sized program registers at import.
        entry = self._fatbins.get(handle)
        if entry is None:
            raise RuntimeApiError(f"fatbin handle {handle:#x} was never registered "
                                  "(or was already unregistered)")
        return entry

    def add_fatbin(self, wrapper: int, wrapper_magic: int, wrapper_version: int,
                   image: bytes | memoryview | None) -> int:
        block = ctypes.create_string_buffer(HANDLE_SIZE)
        handle = ctypes.addressof(block)
        with self._lock:
            self._blocks[handle] = block
            self._fatbins[handle] = RegisteredFatbin(handle, wrapper, wrapper_magic, wrapper_version, image)
        log.debug("registered fatbin %#x (wrapper %#x, %s bytes)", handle, wrapper,
                  "no" if image is None else len(image))
        return handle

    def remove(self, handle: int) -> RegisteredFatbin:
        with self._lock:
            entry = self._fatbins.pop(handle, None)
            if entry is None:
                raise RuntimeApiError(f"fatbin handle {handle:#x} unregistered twice or never registered")
            del self._blocks[handle]
            self.unregistered += 1
        log.debug("unregistered fatbin %#x (%d functions, %d variables)", handle,
                  len(entry.functions), len(entry.variables))
        return entry


REGISTRATIONS = Registrations()


@implements("__cudaRegisterFatBinary")
def register_fat_binary(wrapper: int, wrapper_magic: int, wrapper_version: int,
                        image: bytes | memoryview | None) -> int:
    return REGISTRATIONS.add_fatbin(wrapper, wrapper_magic, wrapper_version, image)


@implements("__cudaRegisterFatBinaryEnd")
def register_fat_binary_end(handle: int) -> None:
    REGISTRATIONS.get(handle).ended = True


@implements("__cudaRegisterFunction")
def register_function(handle: int, host_fun: int, device_fun: bytes | None,
                      device_name: bytes | None, thread_limit: int) -> None:
    REGISTRATIONS.get(handle).functions.append(
        RegisteredFunction(host_fun, device_fun, device_name, thread_limit))


@implements("__cudaRegisterVar")
def register_var(handle: int, host_var: int, device_address: bytes | None, device_name: bytes | None,
                 ext: int, size: int, constant: int, global_: int) -> None:
    REGISTRATIONS.get(handle).variables.append(
        RegisteredVar(host_var, device_address, device_name, ext, size, bool(constant), bool(global_)))


@implements("__cudaRegisterManagedVar")
def register_managed_var(handle: int, host_var: int, device_address: bytes | None,
                         device_name: bytes | None, ext: int, size: int, constant: int,
                         global_: int) -> None:
    entry = REGISTRATIONS.get(handle)
    name = (device_name or b"?").decode(errors="replace")
    entry.variables.append(RegisteredVar(host_var, device_address, device_name, ext, size,
                                         bool(constant), bool(global_), managed=True))
    entry.refused.append(f"__managed__ variable {name}")
    log.error("__managed__ variable %s is not supported by cricket (unified memory cannot be shared "
              "with a remote GPU); __cudaInitModule will fail for its module", name)


@implements("__cudaUnregisterFatBinary")
def unregister_fat_binary(handle: int) -> None:
    REGISTRATIONS.remove(handle)


@implements("__cudaInitModule")
def init_module(handle: int) -> bool:
    entry = REGISTRATIONS.get(handle)
    if entry.refused:
        log.error("cannot initialise the module of fatbin %#x: %s", handle, "; ".join(entry.refused))
        return False
    return True


# The client runtime registers the rest of the forwarded functions (and replaces the registration
# bookkeeping above with versions that also index kernels and variables by host address).
from cricket.client import runtime_calls  # noqa: E402,F401
