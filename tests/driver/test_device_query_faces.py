"""One device description whichever face asks: examples/device_query.cu prints every cudaDeviceProp
field, every cudaDeviceGetAttribute value and every cuDeviceGetAttribute value, built once with
-cudart shared (the libcudart shim answers the runtime calls) and once with NVIDIA's static cudart
(which asks the cricket libcuda.so.1). Both run against one real emu server and must print the
same lines; the program itself checks that the runtime and driver answers agree in each run."""
from __future__ import annotations

import shutil

import pytest

from cricket.client import driver_env
from cricket.client.run_cli import SHIM, libpython

from .driver_support import ROOT, cricket_run, examples_build

pytestmark = pytest.mark.nvcc

# fields a CUDA application reads to decide what it may do (deviceQuery prints them); the emu
# device has each, and reporting 0 makes programs skip work cricket can do
CAPABILITIES = ("maxTexture1D", "maxTexture2D[0]", "maxTexture3D[2]", "maxSurface2D[1]", "surfaceAlignment",
                "asyncEngineCount", "concurrentKernels", "computePreemptionSupported", "canMapHostMemory",
                "unifiedAddressing", "hostRegisterSupported", "textureAlignment", "texturePitchAlignment",
                "managedMemory")
VIRTUAL_MEMORY_MANAGEMENT = 102      # CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED: cricket.client.vmm
DMA_BUF = 124                        # CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED: not provided


def parse(stdout: str) -> dict[str, str]:
    """"prop NAME = V", "attr N = V" / "attr N error E", "cuattr N = V" lines -> {"prop NAME": "V", ...}."""
    lines = {}
    for line in stdout.splitlines():
        kind, _, rest = line.partition(" ")
        if kind in ("prop", "attr", "cuattr"):
            key, sep, value = rest.partition(" = ")
            lines[f"{kind} {key}" if sep else f"{kind} {rest.split()[0]}"] = value if sep else rest
    return lines


@pytest.fixture(scope="module")
def queries(server, run_lock) -> dict[str, dict[str, str]]:
    if not shutil.which("nvcc"):
        pytest.skip("nvcc (CUDA 13) not found on PATH")
    if not driver_env.available() or not SHIM.exists():
        pytest.skip("the libcudart shim and the libcuda.so.1 replacement are not built; run make build")
    if not libpython():
        pytest.skip("this Python has no shared libpython for a native program to embed")
    results = {}
    for cudart, outdir in (("shared", "examples"), ("static", "examples-static")):
        with run_lock("examples"):
            exe = examples_build.build(["device_query"], ROOT / "build" / outdir, jobs=1,
                                       cudart=cudart)["device_query"]
        proc = cricket_run([str(exe)], server)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "PASS: device query" in proc.stdout and "FAIL" not in proc.stdout, proc.stdout
        results[cudart] = parse(proc.stdout)
    return results


def test_every_property_and_attribute_is_the_same_through_both_faces(queries):
    shim, static = queries["shared"], queries["static"]
    assert sum(k.startswith("prop ") for k in shim) > 100        # every field, array elements apart
    assert sum(k.startswith("attr ") for k in shim) == 147
    assert sum(k.startswith("cuattr ") for k in static) == 147
    differ = {k: (shim.get(k), static.get(k)) for k in shim.keys() | static.keys()
              if shim.get(k) != static.get(k)}
    assert not differ


@pytest.mark.parametrize("field", CAPABILITIES)
def test_capabilities_the_emu_device_has_are_reported(queries, field):
    for face in ("shared", "static"):
        assert int(queries[face][f"prop {field}"]) > 0, face


def test_capabilities_cricket_lacks_are_reported_absent(queries):
    for face in ("shared", "static"):
        assert queries[face][f"attr {VIRTUAL_MEMORY_MANAGEMENT}"] == "1"
        assert queries[face][f"attr {DMA_BUF}"] == "0"
        assert queries[face]["prop concurrentManagedAccess"] == "0"
        assert queries[face]["prop canUseHostPointerForRegisteredMem"] == "0"
        assert queries[face]["prop pageableMemoryAccess"] == "0"
