"""The runtime-API face: the table the libcudart shim's calls are looked up in, and its guard.

Feature modules register with ``@implements(RUNTIME_API, "cudaName")`` (``faces``); the guarded
ones take the C arguments as integers, write out-parameters through ``hostmem`` and return the
``cudaError_t``. ``runtime_api`` imports every feature module and is what the shim's entry imports.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cricket.client.errors import ERR_NO_DEVICE, ERR_UNAVAILABLE, ERR_UNKNOWN, cuda_error_of
from cricket.client.faces import Face
from cricket.client.runtime import RUNTIME

# what cudart answers without a device (the version calls)
_WITHOUT_DEVICE = frozenset({"driver_get_version"})


def runtime_call(fn: Callable[..., Any]) -> Callable[..., int]:
    """Wrap an implementation: exceptions become cudaError_t codes kept as the thread's last error."""
    runtime = RUNTIME

    def call(*args: int) -> int:
        try:
            if runtime.no_device and fn.__name__ not in _WITHOUT_DEVICE:
                return runtime.fail(ERR_NO_DEVICE)
            if runtime.multi_device:
                # The session has one current device on the server: switch it to this thread's
                # and keep other threads from switching it until this call has gone out.
                with runtime.device_lock:
                    runtime.select_device()
                    return runtime.fail(fn(*args) or 0)
            code = fn(*args)
            if code:                    # runtime.fail, inline: this wraps every launch
                runtime.thread.last_error = code
                return code
            return 0
        except Exception as exc:
            code = cuda_error_of(exc)
            runtime.call_failed(fn.__name__, exc, code in (ERR_UNKNOWN, ERR_UNAVAILABLE))
            return runtime.fail(code)
    call.__name__ = call.__qualname__ = fn.__name__
    call.__wrapped__ = fn  # type: ignore[attr-defined]
    return call


RUNTIME_API = Face("CUDA runtime API", runtime_call)
