"""The shim's Cython entry points and their pure-Python twin agree (the shim itself can only use
the compiled module: it calls the `cdef api` functions through C pointers)."""
from __future__ import annotations

import ctypes
import importlib
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from cricket.cudafacts.cudart_errors import ERRORS

TWINS = ["cricket._cext.cudart_api", "cricket.client.cudart_api"]


@pytest.fixture(params=TWINS)
def module(request):
    try:
        return importlib.import_module(request.param)
    except ImportError as exc:
        pytest.skip(f"{request.param} not built: {exc} (run make build)")


def test_compiled_module_exports_every_entry_point_the_shim_takes():
    compiled = pytest.importorskip("cricket._cext.cudart_api")
    twin = importlib.import_module("cricket.client.cudart_api")
    assert set(compiled.__pyx_capi__) == set(compiled.CAPI_NAMES) == set(twin.CAPI_NAMES)


def test_shim_source_asks_for_exactly_these_entry_points():
    root = Path(__file__).resolve().parents[2]
    shim_c = (root / "cext" / "preload" / "shim.c").read_text()
    asked = dict(re.findall(r'API\(\w+, "(cricket_\w+)",\s*"([^"]+)"\)', shim_c))
    twin = importlib.import_module("cricket.client.cudart_api")
    assert set(asked) == set(twin.CAPI_NAMES)
    compiled = pytest.importorskip("cricket._cext.cudart_api")
    # The shim checks the capsule signatures Cython writes; they must be the ones it expects.
    for name, capsule in compiled.__pyx_capi__.items():
        assert f'"{asked[name]}"' in repr(capsule), name


def test_error_strings_and_names_for_every_code(module, real_libcudart):
    real = ctypes.CDLL(str(real_libcudart))
    real.cudaGetErrorName.restype = real.cudaGetErrorString.restype = ctypes.c_char_p
    for code in [*ERRORS, 1000, 65535, -1]:
        assert module.error_name(code) == real.cudaGetErrorName(code), code
        assert module.error_string(code) == real.cudaGetErrorString(code), code


def test_error_text_is_the_same_object_each_time(module):
    # The C caller keeps the pointer: the bytes must stay alive and unchanged.
    assert module.error_string(3) is module.error_string(3)


def test_not_attached_outside_a_shim_process(module):
    assert module.attached() is False


def _wrapper_for(image: bytes, magic: int = 0x466243b1):
    data = ctypes.create_string_buffer(image, len(image))

    class Wrapper(ctypes.Structure):
        _fields_ = [("magic", ctypes.c_int32), ("version", ctypes.c_int32),
                    ("data", ctypes.c_void_p), ("filename_or_fatbins", ctypes.c_void_p)]
    w = Wrapper(ctypes.c_int32(magic).value, 1, ctypes.addressof(data), None)
    return w, data


@pytest.fixture(scope="module")
def real_fatbin(tmp_path_factory) -> bytes:
    if not shutil.which("nvcc"):
        pytest.skip("nvcc (CUDA 13) not found on PATH")
    d = tmp_path_factory.mktemp("fatbin")
    (d / "k.cu").write_text("__global__ void k(int *p) { p[threadIdx.x] = 1; }\n")
    subprocess.run(["nvcc", "-fatbin", "-o", str(d / "k.fatbin"), str(d / "k.cu")], check=True,
                   capture_output=True, timeout=300)
    return (d / "k.fatbin").read_bytes()


@pytest.mark.nvcc
def test_read_fatbin_returns_the_container_nvcc_wrote(module, real_fatbin):
    w, keep = _wrapper_for(real_fatbin + b"trailing bytes not part of it")
    magic, version, image = module.read_fatbin(ctypes.addressof(w))
    assert (magic, version) == (0x466243b1, 1)
    assert image == real_fatbin


def test_read_fatbin_without_a_container_gives_no_image(module):
    w, keep = _wrapper_for(b"\0" * 32)
    assert module.read_fatbin(ctypes.addressof(w)) == (0x466243b1, 1, None)
    w2, keep2 = _wrapper_for(b"\0" * 32, magic=0x1234)
    assert module.read_fatbin(ctypes.addressof(w2)) == (0x1234, 1, None)
    assert module.read_fatbin(0) == (0, 0, None)


def test_read_fatbin_refuses_an_implausible_size(module):
    header = (0xBA55ED50).to_bytes(4, "little") + (1).to_bytes(2, "little") + (16).to_bytes(2, "little")
    w, keep = _wrapper_for(header + (1 << 40).to_bytes(8, "little"))
    with pytest.raises(ValueError, match="corrupt or not a fatbin"):
        module.read_fatbin(ctypes.addressof(w))
