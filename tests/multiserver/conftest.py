"""Fixtures for one program on the devices of several cricket servers: real emu servers on Unix
sockets (``emu`` with one device, ``emu=devices=2`` with two), the test program built by nvcc, and a runner
that starts a program through ``cricket run --server A,B``."""
from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = Path(__file__).resolve().parent / "programs"
TWO_DEVICES = "emu=devices=2,memory=256M"


def _start(backend: str):
    from cricket.client.local_server import LocalServer
    return LocalServer([backend])


@pytest.fixture(scope="module")
def servers():
    """Two servers for a test module: ``emu`` (one device) first, ``emu=devices=2`` second, so the
    combined list is [a0, b0, b1]."""
    started = [_start("emu"), _start(TWO_DEVICES)]
    yield started
    for server in started:
        server.stop()


@pytest.fixture
def fresh_servers():
    """Like ``servers``, for one test (one of them may be killed)."""
    started = [_start("emu"), _start(TWO_DEVICES)]
    yield started
    for server in started:
        server.stop()


@pytest.fixture(scope="session")
def across_servers(shim, tmp_path_factory) -> Path:
    """programs/across_servers.cu built with nvcc -cudart shared."""
    if not shutil.which("nvcc"):
        pytest.skip("nvcc (CUDA 13) not found on PATH")
    exe = tmp_path_factory.mktemp("across") / "across_servers"
    r = subprocess.run(["nvcc", "-cudart", "shared", "-I", str(ROOT / "examples"), "-o", str(exe),
                        str(PROGRAMS / "across_servers.cu")], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return exe


@pytest.fixture(scope="session")
def cuda_python():
    """tests/driver/cuda_python_support.py, loaded by its path: ``PRELUDE`` (cuda-python's driver,
    ``ok``, cuInit) and ``run_program`` (a program in a fresh Python on the libcuda.so.1
    replacement, its JSON result)."""
    spec = importlib.util.spec_from_file_location("cricket_cuda_python_support_ms",
                                                  ROOT / "tests" / "driver" / "cuda_python_support.py")
    support = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(support)
    return support


@pytest.fixture(scope="session")
def run_across():
    """``run_across(addresses, *args, env=..., stdin=...)``: ``cricket run --server A,B -- ARGS``."""
    def run(addresses, *args, env=None, popen=False, timeout=300):
        cmd = [sys.executable, "-m", "cricket", "run", "--server", ",".join(addresses), "--", *map(str, args)]
        full = {**os.environ, **(env or {})}
        if popen:
            return subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True, env=full, cwd=ROOT)
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=full, cwd=ROOT)
    return run
