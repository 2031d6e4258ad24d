"""A kernel's fault where the user looks: on the application's stderr, once.

The server returns a fault with the error: the message names the kernel (mangled), the PTX
instruction and the source line where the backend knows them, as
``... [kernel _Z5checkPKi at `ld.global.u32 ...` (check.cu:12)]``. A failed device assertion's
message holds the line NVIDIA's stack prints (``file:line: function: block: [..], thread: [..]
Assertion `...` failed.``); it is printed as it is. Another fault is printed as
``cricket: kernel check(const int*) failed: CUDA_ERROR_ILLEGAL_ADDRESS (700): ... at `...` (check.cu:12)``
with the kernel's name demangled. The error is sticky (every later call repeats it): only its
first report is printed.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import re
import sys
import threading
from functools import lru_cache

from ..cudafacts import curesult
from ..cudafacts.faults import KERNEL_FAULTS

_ASSERT_PREFIX = "device-side assert triggered: "
_STICKY_PREFIX = "an earlier kernel failed and the context is unusable until reset: "
_LOCATION = re.compile(r"\s*\[kernel (?P<kernel>\S+)(?: at `(?P<instruction>.*?)`)?(?: \((?P<source>[^()]*)\))?\]\s*$")

_lock = threading.Lock()
_reported = False


def report(code: int, message: str) -> bool:
    """Print the fault in ``message`` to stderr unless one was printed already (or ``code`` is
    not a kernel fault). True when it printed."""
    global _reported
    if code not in KERNEL_FAULTS:
        return False
    with _lock:
        if _reported:
            return False
        _reported = True
    try:
        sys.stderr.write(describe(code, message) + "\n")
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        pass
    return True


def describe(code: int, message: str) -> str:
    """The line to print for a fault with the server's ``message``."""
    text = message.split(_STICKY_PREFIX, 1)[-1]
    location = _LOCATION.search(text)
    if location:
        text = text[:location.start()]
    if code == curesult.ASSERT and text.startswith(_ASSERT_PREFIX):
        return text[len(_ASSERT_PREFIX):].strip()
    kernel = demangle(location["kernel"]) if location else "(unknown)"
    where = ""
    if location and location["instruction"]:
        where += f" at `{location['instruction']}`"
    if location and location["source"]:
        where += f" ({location['source']})"
    return f"cricket: kernel {kernel} failed: {curesult.error_name(code)} ({code}): {text.strip()}{where}"


@lru_cache(maxsize=64)
def demangle(name: str) -> str:
    """The C++ name of an Itanium-mangled symbol (libstdc++'s ``__cxa_demangle``); ``name`` itself
    when it is not mangled or no demangler is at hand."""
    if not name.startswith("_Z"):
        return name
    cxa = _cxa_demangle()
    if cxa is None:
        return name
    demangle_fn, free = cxa
    status = ctypes.c_int(0)
    out = demangle_fn(name.encode(), None, None, ctypes.byref(status))
    if not out or status.value != 0:
        return name
    try:
        return ctypes.string_at(out).decode("utf-8", "replace")
    finally:
        free(out)


@lru_cache(maxsize=1)
def _cxa_demangle():
    path = ctypes.util.find_library("stdc++")
    if not path:
        return None
    try:
        lib = ctypes.CDLL(path)
        fn = lib.__cxa_demangle
    except (OSError, AttributeError):
        return None
    fn.restype = ctypes.c_void_p
    fn.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)]
    free = ctypes.CDLL(None).free
    free.argtypes = [ctypes.c_void_p]
    return fn, free
