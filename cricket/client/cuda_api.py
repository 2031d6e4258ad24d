"""Pure-Python twin of ``cricket._cext.cuda_api``: the same Python-visible names. The libcuda.so.1
replacement needs the compiled module's ``cdef api`` entries (a native library cannot call this
twin); the twin exists so that code and tests that only look at ``CAPI_NAMES``/``attached`` run
without the extension."""
from __future__ import annotations

CAPI_NAMES = ("cricket_drv_attach", "cricket_drv_call")


def attached() -> bool:
    """Always False: only the compiled module can be attached to."""
    return False
