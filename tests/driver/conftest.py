"""Fixtures for the libcuda.so.1 replacement (built by ``driver_dir`` of tests/conftest.py): its
library file, the MD2 routines built alone for ctypes, and real servers for a test module
(driver_support.py holds the helpers the test modules import)."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from .driver_support import CUDA_INCLUDE, DRIVER_SRC


def _require_toolchain() -> None:
    if not shutil.which(os.environ.get("CC", "cc")):
        pytest.skip("no C compiler (cc) to build cext/driver")
    if not (CUDA_INCLUDE / "cudaTypedefs.h").exists():
        pytest.skip(f"no CUDA 13 headers in {CUDA_INCLUDE}")


@pytest.fixture(scope="session")
def driver_lib(driver_dir) -> Path:
    return driver_dir / "libcricket-cuda.so"


@pytest.fixture(scope="session")
def md2_so(tmp_path_factory) -> Path:
    """md2.c compiled alone, for ctypes."""
    _require_toolchain()
    out = tmp_path_factory.mktemp("md2") / "libcricket-md2.so"
    subprocess.run([os.environ.get("CC", "cc"), "-shared", "-fPIC", "-O2", "-Wall", "-Werror",
                    str(DRIVER_SRC / "md2.c"), "-o", str(out)], check=True)
    return out


@pytest.fixture(scope="module")
def start_server():
    """Start real cricket servers for one test module (``start_server(backends, **LocalServer
    options)``); they stop when the module's tests are done."""
    from cricket.client.local_server import LocalServer
    started = []

    def start(backends: list[str], **options):
        started.append(LocalServer(backends, **options))
        return started[-1]
    yield start
    for local in started:
        local.stop()


@pytest.fixture(scope="module")
def server(start_server):
    """A real cricket server (emu backend) for one test module."""
    return start_server(["emu"])
