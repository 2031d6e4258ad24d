"""The client runtime's process state without a shim: pointer classification over reserved device
windows, pinned host memory, per-thread last error, stream handles, error mapping."""
from __future__ import annotations

import ctypes
import threading

import pytest

from cricket.client import runtime
from cricket.client.api import CudaError
from cricket.client.runtime import D2D, D2H, DEFAULT, H2D, H2H, Runtime, CudaRuntimeError, cuda_error_of
from cricket.cudafacts import streams
from cricket.rpc.errors import RpcConnectionError


@pytest.fixture
def rt() -> Runtime:
    return Runtime()


def test_device_allocations_reserve_their_addresses_and_classify_copies(rt):
    base = 0x6A00_0000_0000            # a window no host mapping uses in a test process
    rt.add_allocation(base + 0x1000, 4096)
    assert rt.is_device(base + 0x1000) and rt.is_device(base + 0x5000)   # the whole window is ours
    host = ctypes.create_string_buffer(16)
    assert not rt.is_device(ctypes.addressof(host))


def test_copy_kinds_from_cudaMemcpyDefault(rt):
    dev = 0x6B00_0000_0000
    rt.add_allocation(dev, 1 << 20)
    host = 0x1000                      # never a device address
    assert rt.kind_of(dev, host, DEFAULT) == H2D
    assert rt.kind_of(host, dev, DEFAULT) == D2H
    assert rt.kind_of(dev, dev + 64, DEFAULT) == D2D
    assert rt.kind_of(host, host, DEFAULT) == H2H
    with pytest.raises(CudaRuntimeError) as err:
        rt.kind_of(dev, host, 9)
    assert err.value.code == runtime.ERR_INVALID_KIND


def test_reservation_keeps_host_mappings_out(rt):
    base = 0x6C00_0000_0000
    rt.reserve(base, 4096)
    # a fixed mapping that does not replace anything now fails inside the window
    assert not rt.address_windows.map_none(base + (1 << 30), 4096)


def test_pinned_host_memory_is_local_and_known(rt):
    ptr = rt.host_alloc(10000)
    assert ptr % 4096 == 0 and rt.is_pinned(ptr + 9999) and not rt.is_pinned(ptr + 10000 + 8192)
    rt.host_free(ptr)
    assert not rt.is_pinned(ptr)
    with pytest.raises(CudaRuntimeError):
        rt.host_free(ptr)


def test_last_error_is_per_thread(rt):
    rt.fail(2)
    seen = []
    t = threading.Thread(target=lambda: seen.append(rt.thread.last_error))
    t.start()
    t.join()
    assert seen == [0] and rt.thread.last_error == 2


def test_default_stream_handles_and_unknown_streams(rt):
    assert rt.stream(0) == rt.stream(streams.LEGACY) == 0
    with pytest.raises(CudaRuntimeError) as err:
        rt.stream(0x1234)
    assert err.value.code == runtime.ERR_INVALID_HANDLE


def test_errors_map_to_cuda_runtime_codes():
    assert cuda_error_of(CudaError(700)) == 700                        # illegal address
    assert cuda_error_of(CudaError(123456)) == runtime.ERR_UNKNOWN
    assert cuda_error_of(RpcConnectionError("gone")) == runtime.ERR_UNAVAILABLE
    assert cuda_error_of(ValueError("bad")) == runtime.ERR_INVALID_VALUE


def test_unreachable_server_fails_once_and_then_at_once(rt, monkeypatch):
    monkeypatch.setenv("CRICKET_SERVER", "/nonexistent/cricket.sock")
    for _ in range(2):
        with pytest.raises(CudaRuntimeError) as err:
            rt.conn
        assert err.value.code == runtime.ERR_UNAVAILABLE
        assert "cannot reach the cricket server" in str(err.value)
