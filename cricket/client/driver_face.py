"""The driver-API face: the table the libcuda.so.1 replacement's calls are looked up in, and its
guard.

Feature modules register with ``@implements(DRIVER_API, "cuName")`` (``faces``); each takes the C
arguments as integers and returns the ``CUresult``. ``driver_api`` is what the entry imports.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cricket import _select
from cricket.client.errors import DriverApiError, result_of  # noqa: F401  (part of this module's API)
from cricket.client.faces import Face
from cricket.client.runtime import RUNTIME

driver_guard = _select.load("cricket._cext.driver_guard", "cricket.client.driver_guard")


def driver_call(fn: Callable[..., Any]) -> Callable[..., int]:
    """Wrap an implementation: exceptions become CUresult codes (``driver_guard``: compiled, with
    a pure-Python twin)."""
    return driver_guard.DriverCall(fn, RUNTIME)


DRIVER_API = Face("CUDA driver API", driver_call)
