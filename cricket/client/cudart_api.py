"""Pure-Python twin of ``cricket._cext.cudart_api`` (the Python-visible part of its API).

The libcudart shim needs the compiled module: it calls that module's ``cdef api`` functions
through C function pointers, which a Python module cannot provide. This twin gives the same
Python-level functions (same names, same results) so that code and tests which only inspect the
entry points work without a compiler; choose with
``cricket._select.load("cricket._cext.cudart_api", "cricket.client.cudart_api")``.
"""
from __future__ import annotations

import ctypes
import logging

from cricket.client import runtime_api
from cricket.cudafacts.fatbin_magic import CONTAINER_MAGIC as FATBIN_MAGIC
from cricket.cudafacts.fatbin_magic import WRAPPER_MAGIC as FATBIN_WRAPPER_MAGIC
from cricket.cudafacts.fatbin_magic import MAX_IN_MEMORY as MAX_FATBIN_SIZE

log = logging.getLogger(__name__)

CAPI_NAMES = (
    "cricket_attach", "cricket_cudaGetErrorString", "cricket_cudaGetErrorName",
    "cricket_cudaRuntimeGetVersion", "cricket___cudaRegisterFatBinary",
    "cricket___cudaRegisterFatBinaryEnd", "cricket___cudaUnregisterFatBinary",
    "cricket___cudaRegisterFunction", "cricket___cudaRegisterVar",
    "cricket___cudaRegisterManagedVar", "cricket___cudaInitModule", "cricket_call",
)


_kept: dict[tuple[str, int], bytes] = {}


class _FatbinWrapper(ctypes.Structure):
    _fields_ = [("magic", ctypes.c_int32), ("version", ctypes.c_int32),
                ("data", ctypes.c_void_p), ("filename_or_fatbins", ctypes.c_void_p)]


class _FatbinHeader(ctypes.Structure):
    _fields_ = [("magic", ctypes.c_uint32), ("version", ctypes.c_uint16),
                ("header_size", ctypes.c_uint16), ("size", ctypes.c_uint64)]


def attached() -> bool:
    """Always False: only the compiled module can be attached to by the shim."""
    return False


def _kept_text(name: str, code: int) -> bytes:
    key = (name, code)
    text = _kept.get(key)
    if text is None:
        fn = runtime_api.lookup(name)
        text = b"cricket: " + name.encode() + b" is not implemented" if fn is None else bytes(fn(code))
        if b"\0" in text:
            raise ValueError(f"{name}({code}) returned a string with a NUL byte")
        text = _kept.setdefault(key, text)
    return text


def error_string(code: int) -> bytes:
    """The message for ``code`` as the C caller gets it (the same object on every call)."""
    return _kept_text("cudaGetErrorString", code)


def error_name(code: int) -> bytes:
    return _kept_text("cudaGetErrorName", code)


def read_fatbin(wrapper: int) -> tuple:
    """``(magic, version, image)`` of the ``__fatBinC_Wrapper_t`` at address ``wrapper``."""
    if not wrapper:
        return (0, 0, None)
    w = _FatbinWrapper.from_address(wrapper)
    magic = w.magic & 0xFFFFFFFF
    if magic != FATBIN_WRAPPER_MAGIC or not w.data:
        return (magic, w.version, None)
    h = _FatbinHeader.from_address(w.data)
    if h.magic != FATBIN_MAGIC:
        return (magic, w.version, None)
    total = h.header_size + h.size
    if h.header_size < ctypes.sizeof(_FatbinHeader) or total > MAX_FATBIN_SIZE:
        raise ValueError(f"fatbin at {w.data:#x} declares {h.header_size} + {h.size} bytes; "
                         "it is corrupt or not a fatbin")
    return (magic, w.version, memoryview((ctypes.c_char * total).from_address(w.data)).cast("B").toreadonly())
