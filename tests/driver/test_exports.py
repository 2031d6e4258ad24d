"""The built library as the dynamic linker sees it: SONAME libcuda.so.1, no libpython, and every
function the CUDA driver headers declare (cuda.h, the profiler and GL/EGL/VDPAU interop headers;
each ABI version and per-thread twin) exported, nothing else."""
from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from .driver_support import CUDA_INCLUDE, driver_build

gen_driver = driver_build.gen_driver


def readelf(args: list[str], path) -> str:
    if not shutil.which("readelf"):
        pytest.skip("readelf (binutils) not installed")
    return subprocess.run(["readelf", *args, str(path)], capture_output=True, text=True, check=True).stdout


def exported_functions(path) -> dict[str, str]:
    """name -> version suffix ("" when unversioned) of every defined dynamic function."""
    out = {}
    for line in readelf(["--dyn-syms", "-W"], path).splitlines():
        parts = line.split()
        if len(parts) >= 8 and parts[3] == "FUNC" and parts[6] != "UND":
            name, _, version = parts[7].partition("@")
            out[name] = version
    return out


def test_soname_is_libcuda_so_1(driver_lib):
    assert re.search(r"\(SONAME\)\s+Library soname: \[libcuda\.so\.1\]", readelf(["-d"], driver_lib))


def test_needs_no_libpython(driver_lib):
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", readelf(["-d"], driver_lib))
    assert needed and not [n for n in needed if "python" in n]


def test_link_named_libcuda_so_1_points_at_the_library(driver_dir, driver_lib):
    assert (driver_dir / "libcuda.so.1").resolve() == driver_lib.resolve()


def test_exports_exactly_the_functions_of_the_driver_headers(driver_lib):
    declared, _ = gen_driver.all_declarations(CUDA_INCLUDE)
    exported = exported_functions(driver_lib)
    assert set(exported) == set(declared)
    assert not any(exported.values()), "NVIDIA's libcuda exports its symbols unversioned"
    for name in ("cuGetProcAddress_v2", "cuGetProcAddress", "cuInit", "cuDriverGetVersion", "cuGetExportTable",
                 "cuMemcpyHtoD", "cuMemcpyHtoD_v2", "cuMemcpyHtoD_v2_ptds", "cuStreamBeginCapture_v2_ptsz",
                 "cuCtxCreate_v4", "cuLaunchKernel_ptsz", "cuProfilerStart", "cuGLCtxCreate_v2",
                 "cuGLMapBufferObject_v2_ptds", "cuGraphicsEGLRegisterImage", "cuVDPAUGetDevice"):
        assert name in exported


def test_every_documented_name_has_a_procedure_table_entry(driver_dir):
    table = (driver_dir / "gen" / "proc_table.c").read_text()
    _, typedefs = gen_driver.all_declarations(CUDA_INCLUDE)
    names = {m[0] for m in gen_driver.PFN.findall(typedefs)}
    assert len(names) > 400 and {"cuProfilerStart", "cuGLGetDevices", "cuVDPAUCtxCreate"} <= names
    assert names == set(re.findall(r'\{ "(\w+)", \d+,', table))
