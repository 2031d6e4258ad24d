"""ctypes declarations for probes of the driver library, run in a child process (see conftest)."""
from __future__ import annotations

import ctypes
import os

CUresult = ctypes.c_int


class CUuuid(ctypes.Structure):
    _fields_ = [("bytes", ctypes.c_ubyte * 16)]


def load(path: str) -> ctypes.CDLL:
    lib = ctypes.CDLL(path, os.RTLD_NOW | os.RTLD_GLOBAL)
    lib.cuGetProcAddress_v2.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int,
                                        ctypes.c_uint64, ctypes.POINTER(ctypes.c_int)]
    lib.cuGetExportTable.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(CUuuid)]
    lib.cuDevicePrimaryCtxRetain.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int]
    lib.cuCtxSetCurrent.argtypes = [ctypes.c_void_p]
    lib.cuCtxPushCurrent_v2.argtypes = [ctypes.c_void_p]
    lib.cuCtxGetCurrent.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
    lib.cuCtxGetDevice_v2.argtypes = [ctypes.POINTER(ctypes.c_int), ctypes.c_void_p]
    return lib


def symbol(lib: ctypes.CDLL, name: str) -> int:
    return ctypes.cast(getattr(lib, name), ctypes.c_void_p).value


def uuid(text: str) -> CUuuid:
    u = CUuuid()
    u.bytes[:] = bytes.fromhex(text.replace("-", ""))
    return u


def export_table(lib: ctypes.CDLL, text: str) -> tuple[int, int]:
    """(CUresult, table address) for a table UUID given as hex bytes in order."""
    table = ctypes.c_void_p()
    rc = lib.cuGetExportTable(ctypes.byref(table), ctypes.byref(uuid(text)))
    return rc, table.value or 0


def slot(table: int, index: int) -> int:
    return ctypes.c_void_p.from_address(table + 8 * index).value or 0


def word(table: int, index: int) -> int:
    return ctypes.c_uint64.from_address(table + 8 * index).value


CUDART_INTERFACE = "6bd5fb6c5bf4e74a8987d93912fd9df9"
TOOLS_RUNTIME_CALLBACK_HOOKS = "a094798c2e742e7493f20800200c0a66"
TOOLS_TLS = "42d85a8123f6cb478298f6e78a3aecdc"
CONTEXT_LOCAL_STORAGE = "c693336e1121df11a8c368f355d89593"
CONTEXT_CHECKS = "263e88607cd2614392f6bbd5006dfa7e"
INTEGRITY_CHECK = "d4082055bde6704b8d34ba123c66e1f2"
TABLE_F8CFF951 = "f8cff95121468b4eb9e2fb469e7c0dd9"
TABLE_21318C60 = "21318c60971432488ca641ff7324c8f2"
NVRTC_TABLE = "da9151d33ae6cc41a5c04f26d533e328"
