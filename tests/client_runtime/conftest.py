"""Fixtures for the client runtime: the libcudart shim and the example programs built once per
session, and real cricket servers (emu backend) on Unix sockets."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from client_runtime_support import EXAMPLES_OUT, ROOT, SHIM, Server, examples_build


@pytest.fixture(scope="session")
def shim(run_lock) -> Path:
    """The shim at the place ``cricket run`` preloads it from, rebuilt from the sources (when they
    changed; one test process at a time)."""
    cuda_include = Path(os.environ.get("CUDA_HOME", "/usr/local/cuda")) / "include"
    if not (cuda_include / "cuda_runtime_api.h").exists() or not shutil.which("cc"):
        pytest.skip("the libcudart shim needs the CUDA 13 headers and cc")
    with run_lock("preload-shim"):
        subprocess.run([sys.executable, str(ROOT / "cext" / "preload" / "build.py"), str(SHIM.parent),
                        "--gen-dir", str(ROOT / "build" / "preload")], check=True, capture_output=True)
    return SHIM


@pytest.fixture(scope="session")
def examples(shim, run_lock) -> dict[str, Path]:
    """Every example program, built with nvcc -cudart shared (kept while up to date)."""
    if not shutil.which("nvcc"):
        pytest.skip("nvcc (CUDA 13) not found on PATH")
    with run_lock("examples"):
        return examples_build.build(None, EXAMPLES_OUT, jobs=2)


@pytest.fixture(scope="session")
def server(tmp_path_factory) -> Server:
    s = Server(tmp_path_factory.mktemp("server"))
    yield s
    s.stop()


@pytest.fixture
def fresh_server(tmp_path) -> Server:
    s = Server(tmp_path)
    yield s
    s.stop()
