"""Fixtures for the client runtime: the example programs built once per session (on the libcudart
shim of tests/conftest.py), and real cricket servers (emu backend) on Unix sockets."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from client_runtime_support import EXAMPLES_OUT, Server, examples_build


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
