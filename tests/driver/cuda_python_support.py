"""What the cuda-python tests of the driver library share: a program run in a fresh Python with the
cricket libcuda.so.1 found first and a server to talk to, its JSON result, and PTX built by nvcc."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

# The start of such a program: cuda-python's driver, ``ok`` (a call's values; it must succeed),
# cuInit and device 0 as ``dev``.
PRELUDE = r"""
import ctypes, json, sys
import numpy as np
from cuda.bindings import driver as d
def ok(result):
    err, *values = result if isinstance(result, tuple) else (result,)
    assert err == d.CUresult.CUDA_SUCCESS, err
    return values[0] if len(values) == 1 else values
ok(d.cuInit(0))
dev = ok(d.cuDeviceGet(0))
"""


def run_program(program: str, driver_dir: Path, server_address: str, *args: str, timeout: float = 120) -> dict:
    """Run ``program`` (which prints a JSON object last) against the server (or a list of servers);
    its result."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CRICKET_DRIVER_", "CUDA_PYTHON_"))}
    env.update(LD_LIBRARY_PATH=str(driver_dir), CRICKET_SERVER=server_address)
    proc = subprocess.run([sys.executable, "-c", program, *args], capture_output=True, text=True, env=env,
                          timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.splitlines()[-1])


def build_ptx(tmp_path_factory, source: Path, *flags: str) -> Path:
    """``source`` built by nvcc into PTX for sm_75 (skips the test without nvcc)."""
    if not shutil.which("nvcc"):
        pytest.skip("nvcc (CUDA 13) not found on PATH")
    out = tmp_path_factory.mktemp("ptx") / (source.stem + ".ptx")
    subprocess.run(["nvcc", *flags, "-ptx", "-arch=sm_75", "-o", str(out), str(source)], check=True)
    return out
