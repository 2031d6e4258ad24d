"""The Python-side runtime API registry and what it answers without a server."""
from __future__ import annotations

import ctypes
import re
from pathlib import Path

import pytest

from cricket.client import runtime_api
from cricket.cudafacts.cudart_errors import CODES, CUDART_VERSION, ERRORS

ROOT = Path(__file__).resolve().parents[2]


def _python_names_called_by_the_shim() -> set[str]:
    """The implementation names forward_runtime.c calls: its string literals passed to CALL_AS,
    call_internal or cricket_api.call, and the functions forwarding under their own name."""
    text = (ROOT / "cext" / "preload" / "forward_runtime.c").read_text()
    names = set(re.findall(r'(?:CALL_AS|call_internal|cricket_api\.call)\(\s*"(\w+)"', text))
    for name, body in re.findall(r"^CRICKET_EXPORT\b[^(;]*?\b(\w+)\s*\([^{]*?\)\s*\{(.*?)\}\s*$",
                                 text, re.M | re.S):
        if "FORWARD(" in body or "FORWARD0(" in body:
            names.add(name)
    return names


def test_every_forwarded_function_has_an_implementation():
    from_forward_c = ["cudaGetErrorString", "cudaGetErrorName", "cudaRuntimeGetVersion",
                      "__cudaRegisterFatBinary", "__cudaRegisterFatBinaryEnd", "__cudaRegisterFunction",
                      "__cudaRegisterVar", "__cudaRegisterManagedVar", "__cudaUnregisterFatBinary",
                      "__cudaInitModule"]
    needed = set(from_forward_c) | _python_names_called_by_the_shim()
    assert {"cudaMalloc", "cudaLaunchKernel", "cudaMemcpyAsync", "cricket_device_identity"} <= needed
    assert sorted(n for n in needed if runtime_api.lookup(n) is None) == []


def test_forwarded_names_are_the_ones_the_shim_defines(build_module):
    assert sorted(build_module.gen_stubs.read_forwarded_names()) == sorted(runtime_api.FORWARDED)


def test_error_table_covers_the_header_enum():
    assert len(ERRORS) == 134
    assert ERRORS[801] == ("cudaErrorNotSupported", "operation not supported")
    assert CODES["cudaErrorCudartUnloading"] == 4
    assert runtime_api.cuda_get_error_name(99999) == b"unrecognized error code"
    assert runtime_api.cuda_runtime_get_version() == (0, CUDART_VERSION) == (0, 13000)


def test_register_refuses_a_second_implementation_unless_replacing():
    name = "cudaGetErrorName"
    original = runtime_api.lookup(name)
    with pytest.raises(runtime_api.RuntimeApiError, match="replace=True"):
        runtime_api.register(name, lambda code: b"x")
    try:
        runtime_api.register(name, lambda code: b"x", replace=True)
        assert runtime_api.lookup(name)(1) == b"x"
    finally:
        runtime_api.register(name, original, replace=True)


@pytest.fixture
def registrations(monkeypatch):
    fresh = runtime_api.Registrations()
    monkeypatch.setattr(runtime_api, "REGISTRATIONS", fresh)
    return fresh


def test_fatbin_lifecycle_is_recorded(registrations):
    handle = runtime_api.register_fat_binary(0x1000, 0x466243b1, 1, b"image")
    assert handle != 0
    assert ctypes.string_at(handle, runtime_api.HANDLE_SIZE) == bytes(runtime_api.HANDLE_SIZE)
    runtime_api.register_function(handle, 0x2000, b"_Z1kv", b"_Z1kv", -1)
    runtime_api.register_var(handle, 0x3000, b"v", b"v", 0, 8, 1, 0)
    runtime_api.register_fat_binary_end(handle)
    (entry,) = registrations.fatbins()
    assert entry.ended and entry.image == b"image"
    assert entry.functions[0].host_fun == 0x2000 and entry.variables[0].constant
    assert runtime_api.init_module(handle) is True
    runtime_api.unregister_fat_binary(handle)
    assert registrations.fatbins() == [] and registrations.unregistered == 1


def test_unknown_handle_is_an_error_that_names_it(registrations):
    with pytest.raises(runtime_api.RuntimeApiError, match="0xdead"):
        runtime_api.register_fat_binary_end(0xDEAD)
    handle = runtime_api.register_fat_binary(0, 0, 0, None)
    runtime_api.unregister_fat_binary(handle)
    with pytest.raises(runtime_api.RuntimeApiError, match="unregistered twice"):
        runtime_api.unregister_fat_binary(handle)


def test_managed_variable_is_kept_for_placement_at_init(registrations):
    # placed by cricket.client.managed at __cudaInitModule (examples/managed_memory.cu runs it)
    handle = runtime_api.register_fat_binary(0, 0, 0, None)
    runtime_api.register_managed_var(handle, 0x4000, b"m", b"m", 0, 4, 0, 0)
    entry = registrations.get(handle)
    assert entry.refused == [] and [(v.host_var, v.managed) for v in entry.variables] == [(0x4000, True)]
