"""Fixtures for the libcuda.so.1 replacement (built by ``driver_dir`` of tests/conftest.py): its
library file, the MD2 routines built alone for ctypes, and a runner for probes that load the
library in a separate Python process (loading a library whose SONAME is libcuda.so.1 into the test
process would shadow a real driver for later tests)."""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DRIVER_SRC = ROOT / "cext" / "driver"
CUDA_INCLUDE = Path(os.environ.get("CUDA_HOME", "/usr/local/cuda")) / "include"
HERE = Path(__file__).resolve().parent

# Loaded under its own name: other folders' tests may have a build.py of their own.
_spec = importlib.util.spec_from_file_location("cricket_driver_build", DRIVER_SRC / "build.py")
driver_build = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(driver_build)


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


def run_probe(driver_lib: Path, body: str, env: dict[str, str] | None = None) -> dict:
    """Runs `body` in a fresh Python with `lib` = the driver library (ctypes, by path) and the
    helpers of probe.py; the body sets `result`, which comes back as a dict."""
    script = "import json, sys\nsys.path.insert(0, %r)\nfrom probe import *\nlib = load(%r)\nresult = {}\n%s\nprint(json.dumps(result))\n" % (
        str(HERE), str(driver_lib), textwrap.dedent(body))
    full_env = {**os.environ, **(env or {})}
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=full_env, timeout=60)
    if proc.returncode != 0:
        raise AssertionError(f"probe failed with {proc.returncode}:\n{proc.stderr}")
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    data["_stderr"] = proc.stderr
    return data


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
