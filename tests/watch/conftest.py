"""Fixtures for watching a server: real `cricket server` processes and an nvcc-built kernel."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from watch_support import VADD, Server


@pytest.fixture
def start_server(tmp_path):
    servers: list[Server] = []

    def start(*args: str) -> Server:
        servers.append(Server(tmp_path, *args))
        return servers[-1]

    yield start
    for s in servers:
        s.stop()


@pytest.fixture(scope="session")
def vadd_fatbin(tmp_path_factory) -> Path:
    if not shutil.which("nvcc"):
        pytest.skip("nvcc (CUDA 13) not found on PATH")
    out = tmp_path_factory.mktemp("watch") / "vadd.fatbin"
    r = subprocess.run(["nvcc", "-fatbin", "-arch=sm_75", "-o", str(out), str(VADD)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return out
