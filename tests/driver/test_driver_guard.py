"""The driver-API face's guard (``cext/driver_guard.pyx``) and its pure-Python twin answer the same
``CUresult`` for the same outcomes: no server to talk to, an implementation's result or None, its
exception of each kind, and a thread on another device than the session's, on a real server."""
from __future__ import annotations

import importlib

import pytest

from cricket.client.errors import DriverApiError, CudaRuntimeError, ERR_INVALID_SYMBOL
from cricket.client.runtime import Runtime
from cricket.cudafacts import curesult
from cricket.rpc.errors import RpcError

IMPLEMENTATIONS = ["cricket._cext.driver_guard", "cricket.client.driver_guard"]


def _guard(module: str):
    try:
        return importlib.import_module(module).DriverCall
    except ImportError:
        pytest.skip(f"{module} is not built (make build)")


def _outcomes(module: str, address: str, monkeypatch) -> list:
    DriverCall = _guard(module)
    rt = Runtime()
    seen = []

    def ok(a: int, b: int) -> None:
        rt.conn     # noqa: B018 -- connects at the first call, as the implementations do
        seen.append((a, b, rt._server_device))

    def refuses() -> int:
        return curesult.INVALID_VALUE

    def raises_driver() -> int:
        raise DriverApiError(curesult.NOT_PERMITTED, "not now")

    def raises_runtime() -> int:
        raise CudaRuntimeError(ERR_INVALID_SYMBOL, "no such symbol")    # another code in the driver API

    def loses_connection() -> int:
        raise RpcError("the server went away")

    def breaks() -> int:
        raise ZeroDivisionError("a bug")

    monkeypatch.delenv("CRICKET_SERVER", raising=False)
    out = [DriverCall(ok, rt)(1, 2), list(seen)]                       # no server named: nothing runs
    monkeypatch.setenv("CRICKET_SERVER", address)
    out += [DriverCall(ok, rt)(3, 4), rt._conn is not None]            # runs: connects
    out += [DriverCall(refuses, rt)(), DriverCall(raises_driver, rt)(), DriverCall(raises_runtime, rt)(),
            DriverCall(breaks, rt)()]
    rt.set_device(1)                                                   # as cricketSetDevice does
    out += [DriverCall(ok, rt)(5, 6), list(seen), rt.multi_device]
    rt.set_device(0)
    out += [DriverCall(ok, rt)(7, 8), list(seen)]
    out += [DriverCall(loses_connection, rt)(), rt._broken is not None]
    guarded = DriverCall(ok, rt)
    out += [guarded.__wrapped__ is ok, guarded.__name__, guarded.__qualname__]
    rt.conn.close()
    return out


def test_compiled_and_twin_guards_answer_alike(monkeypatch, start_server):
    server = start_server(["emu=devices=2,memory=64M"])
    compiled, twin = (_outcomes(module, server.address, monkeypatch) for module in IMPLEMENTATIONS)
    assert compiled == twin
    assert twin[:2] == [curesult.NOT_INITIALIZED, []]
    assert twin[2:4] == [curesult.SUCCESS, True]
    assert twin[4:8] == [curesult.INVALID_VALUE, curesult.NOT_PERMITTED, curesult.NOT_FOUND, curesult.UNKNOWN]
    assert twin[8:11] == [curesult.SUCCESS, [(3, 4, 0), (5, 6, 1)], True]     # the session followed
    assert twin[11:13] == [curesult.SUCCESS, [(3, 4, 0), (5, 6, 1), (7, 8, 0)]]
    assert twin[13:15] == [curesult.DEVICE_UNAVAILABLE, True]
    assert twin[15:] == [True, "ok", "ok"]
