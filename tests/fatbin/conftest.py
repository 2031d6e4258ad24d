"""Fixtures for the fatbin tests: committed fixture files, and programs nvcc builds once per session."""
from __future__ import annotations

import concurrent.futures
import pathlib
import shutil
import subprocess
import threading

import pytest

HERE = pathlib.Path(__file__).resolve().parent
CUDA = HERE / "cuda"
FIXTURES = HERE / "fixtures"

PARAMS = ["params.cu", "main.cu"]
RDC = ["params.cu", "main.cu", "rdc_a.cu", "rdc_b.cu"]

#: name: (nvcc options, sources, output file). Each is compiled once per session, on first use.
VARIANTS: dict[str, tuple[list[str], list[str], str]] = {
    "default": ([], PARAMS, "app"),
    "sm75": (["-arch=sm_75"], PARAMS, "app"),
    "sm90": (["-arch=sm_90"], PARAMS, "app"),
    "gencode": (["-gencode", "arch=compute_75,code=sm_75",
                 "-gencode", "arch=compute_90,code=[sm_90,compute_90]",
                 "-gencode", "arch=compute_100,code=sm_100"], PARAMS, "app"),
    "compress_all": (["-Xfatbin", "-compress-all"], PARAMS, "app"),
    "cm_default": (["--compress-mode=default"], PARAMS, "app"),
    "cm_size": (["--compress-mode=size"], PARAMS, "app"),
    "cm_speed": (["--compress-mode=speed"], PARAMS, "app"),
    "cm_balance": (["--compress-mode=balance"], PARAMS, "app"),
    "cm_none": (["--compress-mode=none"], PARAMS, "app"),
    "debug": (["-G"], PARAMS, "app"),
    "lineinfo": (["-lineinfo"], PARAMS, "app"),
    "rdc": (["-rdc=true"], RDC, "app"),
    "cudart_shared": (["-cudart", "shared"], PARAMS, "app"),
    "lib": (["-shared", "-Xcompiler", "-fPIC"], ["params.cu"], "libparams.so"),
    "object": (["-c"], ["params.cu"], "params.o"),
    "lto": (["-dc", "-gencode", "arch=compute_75,code=lto_75"], ["params.cu"], "lto.o"),
    # dlopen'ed by the wrapper-address tests, against the stand-in libcudart.so.13
    "lib_cs": (["-shared", "-Xcompiler", "-fPIC", "-cudart", "shared"], ["lib.cu"], "libk_cs.so"),
    "rdc_lib_cs": (["-rdc=true", "-shared", "-Xcompiler", "-fPIC", "-cudart", "shared"],
                   ["rdc_a.cu", "rdc_b.cu"], "librdc_cs.so"),
}


class NvccBuilds:
    """Compiles every variant in the background (two at a time) the first time one is asked for,
    through the run's shared nvcc builds (``nvcc_build``)."""

    def __init__(self, nvcc_build):
        self.nvcc_build = nvcc_build
        self._lock = threading.Lock()
        self._futures: dict[str, concurrent.futures.Future] = {}
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=2)

    def _compile(self, name: str) -> pathlib.Path:
        options, sources, output = VARIANTS[name]
        return self.nvcc_build(*options, *(CUDA / s for s in sources), output=output)

    def path(self, name: str) -> pathlib.Path:
        with self._lock:
            if not self._futures:
                for n in VARIANTS:
                    self._futures[n] = self._pool.submit(self._compile, n)
        return self._futures[name].result()

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


@pytest.fixture(scope="session")
def nvcc_builds(nvcc_build):
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc (CUDA 13) not found on PATH")
    builds = NvccBuilds(nvcc_build)
    yield builds
    builds.close()


@pytest.fixture(scope="session")
def fake_cudart(tmp_path_factory) -> pathlib.Path:
    """A stand-in libcudart.so.13 (SONAME and version node as NVIDIA's) that records registrations."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc not found on PATH")
    d = tmp_path_factory.mktemp("fakecudart")
    script = d / "version.map"
    script.write_text("libcudart.so.13 { global: *; };\n")
    out = d / "libcudart.so.13"
    subprocess.run(["gcc", "-shared", "-fPIC", "-O1", "-Wall", "-Wl,-soname,libcudart.so.13",
                    f"-Wl,--version-script={script}", "-o", str(out), str(CUDA / "fake_cudart.c")],
                   check=True)
    return out


def fixture(name: str) -> pathlib.Path:
    return FIXTURES / name


FIXTURE_FILES = sorted(p.name for p in FIXTURES.glob("*.fatbin"))
