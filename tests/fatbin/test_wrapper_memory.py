"""Decoding the wrapper pointer ``__cudaRegisterFatBinary`` receives, in a live process.

The shared objects are built by nvcc with ``-cudart shared`` and dlopen'ed against a
stand-in libcudart.so.13 (gcc-built, because there is no GPU driver here) that records
the pointers nvcc's start-up code registers. Each check runs in a child process, so a
wrong pointer could not take the test runner down.
"""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from cricket.fatbin import Fatbin, FormatError, MemoryAccessError, ProcessMemory

from .signatures import LIB_KERNELS, RDC_KERNELS, expected_layout

pytestmark = pytest.mark.nvcc

CHILD = textwrap.dedent("""
    import ctypes, json, sys
    fake = ctypes.CDLL(sys.argv[1], mode=ctypes.RTLD_GLOBAL)
    fake.fake_wrapper.restype = ctypes.c_void_p
    fake.fake_function.restype = ctypes.c_char_p
    from cricket.fatbin import Fatbin
    ctypes.CDLL(sys.argv[2])                        # dlopen: its constructors register
    out = {"functions": [fake.fake_function(i).decode() for i in range(fake.fake_function_count())],
           "fatbins": []}
    for i in range(fake.fake_wrapper_count()):
        fb = Fatbin.from_wrapper_address(fake.fake_wrapper(i))
        out["fatbins"].append({
            "location": fb.wrapper.location, "version": fb.wrapper.version,
            "prelinked": len(fb.prelinked), "ptx_sources": len(fb.ptx_sources()),
            "layouts": {name: fb.kernel(name).offsets_and_sizes for name in out["functions"]
                        if name in fb.kernel_names()},
            "digest": fb.digest})
    print(json.dumps(out))
""")


def run_child(fake_cudart, library) -> dict:
    r = subprocess.run([sys.executable, "-c", CHILD, str(fake_cudart), str(library)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_dlopened_whole_program_library(nvcc_builds, fake_cudart):
    out = run_child(fake_cudart, nvcc_builds.path("lib_cs"))
    assert out["functions"] == list(LIB_KERNELS)
    (fb,) = out["fatbins"]
    assert fb["version"] == 1 and fb["location"].startswith("libk_cs.so+0x")
    assert fb["ptx_sources"] == 1
    for name, types in LIB_KERNELS.items():
        assert [tuple(x) for x in fb["layouts"][name]] == expected_layout(types)[0]


def test_dlopened_rdc_library_registers_a_v2_wrapper_with_prelinked_tus(nvcc_builds, fake_cudart):
    out = run_child(fake_cudart, nvcc_builds.path("rdc_lib_cs"))
    assert sorted(out["functions"]) == sorted(RDC_KERNELS)
    (fb,) = out["fatbins"]
    assert (fb["version"], fb["prelinked"], fb["ptx_sources"]) == (2, 2, 2)
    # every registered kernel is found, also the one nvlink dropped from the linked image
    for name, types in RDC_KERNELS.items():
        assert [tuple(x) for x in fb["layouts"][name]] == expected_layout(types)[0]


def test_memory_image_equals_the_file_image(nvcc_builds, fake_cudart):
    from cricket.fatbin import find_device_code
    out = run_child(fake_cudart, nvcc_builds.path("lib_cs"))
    on_disk = [f.digest for f in find_device_code(nvcc_builds.path("lib_cs")).registered()]
    assert [f["digest"] for f in out["fatbins"]] == on_disk


def test_bad_wrapper_pointers_give_memory_errors_not_crashes():
    import ctypes
    with pytest.raises(MemoryAccessError, match="not a valid pointer"):
        Fatbin.from_wrapper_address(0)
    with pytest.raises(MemoryAccessError, match="not readable memory"):
        Fatbin.from_wrapper_address(8)
    junk = ctypes.create_string_buffer(b"\xb1\x43\x62\x46\x01\x00\x00\x00" + (16).to_bytes(8, "little") + b"\0" * 8)
    with pytest.raises(MemoryAccessError, match="not readable memory"):
        Fatbin.from_wrapper_address(ctypes.addressof(junk))
    not_a_wrapper = ctypes.create_string_buffer(24)
    with pytest.raises(FormatError, match="not a fatbin wrapper"):
        Fatbin.from_wrapper_address(ctypes.addressof(not_a_wrapper))


def test_a_wrapper_built_in_memory_is_decoded_in_place():
    import ctypes
    from .helpers import fixture
    data = fixture("params_sm75_lz4.fatbin").read_bytes()
    image = ctypes.create_string_buffer(data, len(data))
    wrapper = ctypes.create_string_buffer(
        (0x466243B1).to_bytes(4, "little") + (1).to_bytes(4, "little")
        + ctypes.addressof(image).to_bytes(8, "little") + bytes(8), 24)
    fb = Fatbin.from_wrapper_address(ctypes.addressof(wrapper), ProcessMemory())
    assert bytes(fb.image) == data
    assert fb.kernel("k_externc").offsets_and_sizes == [(0, 0, 4), (1, 8, 8)]


SCAN_CHILD = textwrap.dedent("""
    import ctypes, json, sys
    if sys.argv[1]:
        ctypes.CDLL(sys.argv[1], mode=ctypes.RTLD_GLOBAL)
    ctypes.CDLL(sys.argv[2])
    from cricket.fatbin.process import loaded_fatbins
    print(json.dumps([{"origin": f.origin, "version": f.wrapper.version, "digest": f.digest,
                       "prelinked": [p.digest for p in f.prelinked], "kernels": f.kernel_names()}
                      for f in loaded_fatbins()]))
""")


@pytest.mark.parametrize("variant, needs_fake", [("lib", False), ("rdc_lib_cs", True)])
def test_loaded_objects_are_scanned_for_registered_fatbins(nvcc_builds, fake_cudart, variant, needs_fake):
    """Static cudart cannot be interposed; the client can still find every registered
    fatbin of every loaded object, decoded from memory, identical to the file's."""
    from cricket.fatbin import find_device_code
    library = nvcc_builds.path(variant)
    r = subprocess.run([sys.executable, "-c", SCAN_CHILD, str(fake_cudart) if needs_fake else "",
                        str(library)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    found = [f for f in json.loads(r.stdout) if f["origin"].split(" at ")[-1].startswith(library.name)]
    on_disk = find_device_code(library).registered()
    assert [f["digest"] for f in found] == [f.digest for f in on_disk]
    assert [f["prelinked"] for f in found] == [[p.digest for p in f.prelinked] for f in on_disk]
    expected = RDC_KERNELS if variant == "rdc_lib_cs" else None
    if expected:
        assert set(found[0]["kernels"]) == set(expected)
    else:
        assert "k_externc" in found[0]["kernels"]
