"""The Python-side runtime API registry and what it answers without a server."""
from __future__ import annotations

import ctypes

import pytest

from cricket.client import runtime_api
from cricket.client.cuda_errors import CODES, CUDART_VERSION, ERRORS


def test_every_forwarded_function_has_an_implementation():
    assert runtime_api.implemented() == list(runtime_api.FORWARDED)


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


def test_managed_variable_makes_init_module_fail(registrations):
    handle = runtime_api.register_fat_binary(0, 0, 0, None)
    runtime_api.register_managed_var(handle, 0x4000, b"m", b"m", 0, 4, 0, 0)
    assert runtime_api.init_module(handle) is False
    assert registrations.get(handle).refused == ["__managed__ variable m"]
