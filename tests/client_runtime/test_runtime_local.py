"""The runtime calls a process answers itself (``cext/runtime_local.pyx``, answered in C) and their
pure-Python twin (``cricket/client/runtime_local.py``) answer alike: the same ``cudaError_t``, the
same out-parameter, the same last error, current device and multi-device state, called as the
shim calls them and as Python calls them, on a real server with two emu devices."""
from __future__ import annotations

import ctypes

import pytest

from client_runtime_support import Server, implementation, runtimes

from cricket.client.errors import ERR_INVALID_DEVICE, ERR_INVALID_VALUE, ERR_NO_DEVICE
from cricket.client.runtime import Runtime
from cricket.cudafacts import device_attributes

IMPLEMENTATIONS = ["cricket._cext.runtime_local", "cricket.client.runtime_local"]
NULL = 0
MINUS_ONE = (1 << 64) - 1           # an int -1 as the shim passes it
WARP_SIZE = device_attributes.WARP_SIZE


@pytest.fixture(scope="module")
def two_devices(tmp_path_factory) -> Server:
    s = Server(tmp_path_factory.mktemp("local-answers"), backend="emu=devices=2,memory=64M")
    yield s
    s.stop()


@pytest.fixture
def session(monkeypatch, two_devices):
    """A new Runtime (the process state), connected to the two-device server: HELLO's devices."""
    yield from runtimes(monkeypatch, two_devices.address)


def _outcomes(module_name: str, rt: Runtime) -> list:
    """What each call answers and leaves behind, through ``module_name``'s entries on ``rt``."""
    entries = implementation(module_name).entries(rt)
    out = ctypes.c_int32(-7)
    where = ctypes.addressof(out)
    seen = []

    def call(name: str, *args: int) -> None:
        out.value = -7
        code = entries[name](*args)
        shown = tuple("out" if a == where else a for a in args)     # (each run has its own buffer)
        seen.append((name, shown, code, out.value, rt.thread.last_error, rt.thread.device,
                     rt.multi_device))

    call("cudaGetLastError")
    call("cudaGetDeviceCount", where)
    call("cudaGetDeviceCount", NULL)                        # refused: kept as the last error
    call("cudaPeekAtLastError")
    call("cudaPeekAtLastError")
    call("cudaGetLastError")                                # ... and reset
    call("cudaGetLastError")
    call("cudaGetDevice", where)
    call("cudaGetDevice", NULL)
    call("cudaDeviceGetAttribute", where, WARP_SIZE, 0)
    call("cudaDeviceGetAttribute", where, WARP_SIZE, 1)
    call("cudaDeviceGetAttribute", where, device_attributes.MAX, 0)
    call("cudaDeviceGetAttribute", NULL, WARP_SIZE, 0)
    call("cudaDeviceGetAttribute", where, 0, 0)
    call("cudaDeviceGetAttribute", where, WARP_SIZE, 2)     # no such device (the exception path)
    call("cudaDeviceGetAttribute", where, WARP_SIZE, MINUS_ONE)
    call("cudaDeviceGetAttribute", where, WARP_SIZE, -1)    # a Python int, not a word
    call("cudaGetLastError")
    call("cudaSetDevice", 0)                                # the current device
    call("cudaSetDevice", 2)
    call("cudaSetDevice", MINUS_ONE)
    call("cudaSetDevice", -1)
    call("cudaGetLastError")
    call("cudaGetDevice", where)
    call("cudaSetDevice", 1)                                # another device: several from now on
    call("cudaGetDevice", where)
    call("cudaGetDeviceCount", where)
    call("cudaDeviceGetAttribute", where, WARP_SIZE, 1)
    call("cudaSetDevice", 0)
    call("cudaGetDevice", where)
    rt.no_device = "no device is visible"                   # as CUDA_VISIBLE_DEVICES hiding all
    call("cudaGetDeviceCount", where)
    call("cudaGetLastError")
    rt.no_device = ""
    names = {name: getattr(entries[name], "__name__", None) for name in sorted(entries)}
    return [seen, names]


def test_compiled_and_twin_answers_alike(session):
    compiled, twin = (_outcomes(module, session()) for module in IMPLEMENTATIONS)
    assert compiled == twin
    seen = {i: step[2:] for i, step in enumerate(twin[0])}
    # (code, out-parameter, last error, thread's device, multi_device) after each call
    assert seen[1] == (0, 2, 0, 0, False)                               # two devices
    assert seen[2] == (ERR_INVALID_VALUE, -7, ERR_INVALID_VALUE, 0, False)
    assert seen[3][0] == seen[4][0] == seen[5][0] == ERR_INVALID_VALUE  # peeked, peeked, taken
    assert seen[6] == (0, -7, 0, 0, False)
    assert seen[7][:2] == (0, 0) and seen[8][0] == ERR_INVALID_VALUE
    assert seen[9][:2] == (0, 32) and seen[10][:2] == (0, 32)          # the warp size of each
    assert [seen[i][0] for i in range(11, 17)] == [ERR_INVALID_VALUE] * 3 + [ERR_INVALID_DEVICE] * 3
    assert seen[17][0] == ERR_INVALID_DEVICE and seen[18] == (0, -7, 0, 0, False)
    assert [seen[i][0] for i in (19, 20, 21)] == [ERR_INVALID_DEVICE] * 3
    assert seen[24] == (0, -7, 0, 1, True) and seen[25][:2] == (0, 1)   # device 1, several devices
    assert seen[26][:2] == (0, 2) and seen[27][:2] == (0, 32) and seen[29][:2] == (0, 0)
    assert seen[30][0] == ERR_NO_DEVICE and seen[31][0] == ERR_NO_DEVICE
    assert twin[1]["cudaGetLastError"] == "cuda_get_last_error"


def test_compiled_answers_connect_first(monkeypatch, two_devices):
    """Before the first connection the compiled entry runs the twin, which connects."""
    module = implementation(IMPLEMENTATIONS[0])
    monkeypatch.setenv("CRICKET_SERVER", two_devices.address)
    rt = Runtime()
    out = ctypes.c_int32(0)
    assert module.entries(rt)["cudaGetDeviceCount"](ctypes.addressof(out)) == 0
    assert out.value == 2 and rt._conn is not None
    rt.conn.close()
