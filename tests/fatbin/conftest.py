"""Fixtures for the fatbin tests: the programs nvcc builds once per session (variants.py) and a
stand-in libcudart."""
from __future__ import annotations

import concurrent.futures
import pathlib
import shutil
import subprocess
import threading

import pytest

from .variants import CUDA, VARIANTS



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
