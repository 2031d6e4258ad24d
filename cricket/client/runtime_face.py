"""The runtime-API face: the table the libcudart shim's calls are looked up in, and its guard.

Feature modules register with ``@implements(RUNTIME_API, "cudaName")`` (``faces``); the guarded
ones take the C arguments as integers, write out-parameters through ``hostmem`` and return the
``cudaError_t``. ``runtime_api`` imports every feature module and is what the shim's entry imports.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cricket import _select
from cricket.client.faces import Face
from cricket.client.runtime import RUNTIME

runtime_guard = _select.load("cricket._cext.runtime_guard", "cricket.client.runtime_guard")

# what cudart answers without a device (the version calls)
_WITHOUT_DEVICE = frozenset({"driver_get_version"})


def runtime_call(fn: Callable[..., Any]) -> Callable[..., int]:
    """Wrap an implementation: exceptions become cudaError_t codes kept as the thread's last error
    (``runtime_guard``: compiled, with a pure-Python twin)."""
    return runtime_guard.RuntimeCall(fn, RUNTIME, fn.__name__ not in _WITHOUT_DEVICE)


RUNTIME_API = Face("CUDA runtime API", runtime_call)
