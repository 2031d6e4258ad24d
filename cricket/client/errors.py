"""The client's exceptions and how each becomes a CUDA error code (the bottom of the client).

``CudaError`` carries a driver ``CUresult`` (what the server answers), ``CudaRuntimeError`` a
``cudaError_t`` (what the client runtime decides itself). :func:`error_source` sorts any exception
raised below the API faces so that each face translates it into its own codes
(:func:`cuda_error_of` for the runtime API, :func:`result_of` for the driver API).
"""
from __future__ import annotations

import sys

from cricket.cudafacts import curesult
from cricket.cudafacts.cudart_errors import CODES, ERRORS
from cricket.client.kernel_args import KernelArgumentError
from cricket.rpc.errors import RpcError

SUCCESS = 0
ERR_INVALID_VALUE = CODES["cudaErrorInvalidValue"]
ERR_MEMORY = CODES["cudaErrorMemoryAllocation"]
ERR_INVALID_CONFIG = CODES["cudaErrorInvalidConfiguration"]
ERR_INVALID_DEVICE = CODES["cudaErrorInvalidDevice"]
ERR_NO_DEVICE = CODES["cudaErrorNoDevice"]
ERR_INVALID_FUNCTION = CODES["cudaErrorInvalidDeviceFunction"]
ERR_INVALID_SYMBOL = CODES["cudaErrorInvalidSymbol"]
ERR_INVALID_HANDLE = CODES["cudaErrorInvalidResourceHandle"]
ERR_INVALID_DEVPTR = CODES["cudaErrorInvalidDevicePointer"]
ERR_INVALID_KIND = CODES["cudaErrorInvalidMemcpyDirection"]
ERR_NOT_READY = CODES["cudaErrorNotReady"]
ERR_UNAVAILABLE = CODES["cudaErrorDevicesUnavailable"]
ERR_NOT_SUPPORTED = CODES["cudaErrorNotSupported"]
ERR_UNKNOWN = CODES["cudaErrorUnknown"]
ERR_HOST_REGISTERED = CODES["cudaErrorHostMemoryAlreadyRegistered"]
ERR_HOST_NOT_REGISTERED = CODES["cudaErrorHostMemoryNotRegistered"]
ERR_INVALID_IMAGE = CODES["cudaErrorInvalidKernelImage"]


class CudaError(Exception):
    """A CUDA failure reported by the server: ``code`` is the CUresult, ``name`` its CUDA name."""

    def __init__(self, code: int, message: str = "", call: str = "") -> None:
        self.code = int(code)
        self.name = curesult.error_name(self.code)
        self.message = message or curesult.error_string(self.code)
        self.call = call
        where = f"{call}: " if call else ""
        super().__init__(f"{where}{self.name} ({self.code}): {self.message}")


class CudaRuntimeError(Exception):
    """A CUDA runtime call failed: ``code`` is the cudaError_t it returns."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


class SessionUnavailable(CudaRuntimeError):
    """No session with the server: it cannot be reached, or it refused this process (a wrong
    token, a backend it lacks). Logged once, where it happened; every call that needs the server
    then fails with cudaErrorDevicesUnavailable, as CUDA's calls do while the devices are unavailable."""

    def __init__(self, message: str) -> None:
        super().__init__(ERR_UNAVAILABLE, message)


class DriverApiError(Exception):
    """A driver call failed: ``code`` is the CUresult it returns."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


class RuntimeApiError(Exception):
    """Misuse of a registry (a name registered twice, a fatbin handle never registered)."""


def error_source(exc: BaseException) -> tuple[str, int]:
    """What an exception raised below the API faces is, for each to translate into its codes:
    ("runtime", its cudaError_t), ("driver", the server's CUresult), ("connection", 0),
    ("argument", 0) or ("other", 0)."""
    if isinstance(exc, CudaRuntimeError):
        return "runtime", exc.code
    if isinstance(exc, CudaError):
        return "driver", exc.code
    if isinstance(exc, (RpcError, OSError)):
        return "connection", 0
    if isinstance(exc, (KernelArgumentError, ValueError)):
        return "argument", 0
    return "other", 0


def cuda_error_of(exc: BaseException) -> int:
    """The cudaError_t for an exception raised below the runtime (driver codes map one to one)."""
    source, code = error_source(exc)
    if source == "runtime":
        return code
    if source == "driver":
        return code if code in ERRORS else ERR_UNKNOWN
    return {"connection": ERR_UNAVAILABLE, "argument": ERR_INVALID_VALUE}.get(source, ERR_UNKNOWN)


# The cudaError_t codes the client runtime raises that differ from the CUresult of the same failure.
_RUNTIME_TO_DRIVER = {ERR_INVALID_CONFIG: curesult.INVALID_VALUE, ERR_INVALID_DEVPTR: curesult.INVALID_VALUE,
                      ERR_INVALID_SYMBOL: curesult.NOT_FOUND, ERR_INVALID_FUNCTION: curesult.INVALID_HANDLE,
                      ERR_INVALID_KIND: curesult.INVALID_VALUE}


def result_of(exc: BaseException) -> int:
    """The CUresult for an exception raised below the driver API."""
    if isinstance(exc, DriverApiError):
        return exc.code
    linker = sys.modules.get("cricket.client.jit_link")     # loaded by the first cuLink* call
    if linker is not None and isinstance(exc, linker.LinkError):
        return exc.code
    source, code = error_source(exc)
    if source == "driver":
        return code
    if source == "runtime":
        return _RUNTIME_TO_DRIVER.get(code, code)
    return {"connection": curesult.DEVICE_UNAVAILABLE, "argument": curesult.INVALID_VALUE}.get(source, curesult.UNKNOWN)
