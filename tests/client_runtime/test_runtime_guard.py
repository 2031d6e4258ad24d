"""The runtime-API face's guard (``cext/runtime_guard.pyx``) and its pure-Python twin answer the
same ``cudaError_t`` for the same outcomes, and keep it as the calling thread's last error."""
from __future__ import annotations

import importlib

import pytest

from cricket.client.errors import ERR_INVALID_VALUE, ERR_NO_DEVICE, ERR_UNKNOWN, CudaRuntimeError
from cricket.client.runtime import Runtime

IMPLEMENTATIONS = ["cricket._cext.runtime_guard", "cricket.client.runtime_guard"]


def _guard(module: str):
    try:
        return importlib.import_module(module).RuntimeCall
    except ImportError:
        pytest.skip(f"{module} is not built (make build)")


def _outcomes(module: str) -> list:
    RuntimeCall = _guard(module)
    rt = Runtime()
    seen = []

    def ok(a: int, b: int) -> int:
        seen.append(a + b)
        return 0

    def refuses() -> int:
        return ERR_INVALID_VALUE

    def raises() -> int:
        raise CudaRuntimeError(ERR_INVALID_VALUE, "a bad argument")

    def breaks() -> int:
        raise ZeroDivisionError("a bug")

    out = [RuntimeCall(ok, rt, True)(2, 3), rt.thread.last_error, list(seen)]
    out += [RuntimeCall(refuses, rt, True)(), rt.thread.last_error]
    rt.thread.last_error = 0
    out += [RuntimeCall(raises, rt, True)(), rt.thread.last_error]
    out += [RuntimeCall(breaks, rt, True)()]
    rt.no_device = "no device is visible"
    out += [RuntimeCall(ok, rt, True)(1, 1), RuntimeCall(ok, rt, False)(1, 1), list(seen)]
    guarded = RuntimeCall(ok, rt, True)
    out += [guarded.__wrapped__ is ok, guarded.__name__, guarded.__qualname__]
    return out


def test_compiled_and_twin_guards_answer_alike():
    compiled, twin = (_outcomes(module) for module in IMPLEMENTATIONS)
    assert compiled == twin
    assert twin[:5] == [0, 0, [5], ERR_INVALID_VALUE, ERR_INVALID_VALUE]
    assert twin[5:8] == [ERR_INVALID_VALUE, ERR_INVALID_VALUE, ERR_UNKNOWN]     # a bug
    assert twin[8:11] == [ERR_NO_DEVICE, 0, [5, 2]] and twin[11:] == [True, "ok", "ok"]
