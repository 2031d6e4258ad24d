"""The runtime shim makes the device's primary context current, as NVIDIA's runtime does: the
example examples/runtime_primary_context.cu (built with -cudart shared, run by `cricket run` on
emu) checks what the CUDA Runtime API documents and prints PASS; NVIDIA's static cudart passes the
same program on cricket's libcuda.so.1 (tests/driver/test_examples_static.py). Here also the two
points the shim decides: device queries leave the primary context inactive (PyTorch asks
cuDevicePrimaryCtxGetState to avoid creating contexts), and cudaDeviceReset deinitialises it."""
from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cricket.client import driver_env
from cricket.client.run_cli import libpython

ROOT = Path(__file__).resolve().parents[2]

_spec = importlib.util.spec_from_file_location("cricket_primary_context_examples", ROOT / "examples" / "build.py")
examples_build = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = examples_build          # dataclasses look their module up
_spec.loader.exec_module(examples_build)


@pytest.mark.nvcc
def test_runtime_calls_make_the_primary_context_current(run_lock):
    if not shutil.which("nvcc"):
        pytest.skip("nvcc (CUDA 13) not found on PATH")
    if not driver_env.available():
        pytest.skip(f"the libcuda.so.1 replacement is not built in {driver_env.DRIVER_DIR}; run make build")
    if not libpython():
        pytest.skip("this Python has no shared libpython for a native program to embed")
    with run_lock("examples"):
        program = examples_build.build(["runtime_primary_context"], ROOT / "build" / "examples")["runtime_primary_context"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("CRICKET_") and k != "LD_PRELOAD"}
    env["PYTHONPATH"] = str(ROOT)
    proc = subprocess.run([sys.executable, "-m", "cricket", "run", "--backend", "emu", "--", str(program)],
                          capture_output=True, text=True, env=env, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines() == [
        "primary context active after the queries: 0",
        "primary context active after cudaDeviceReset: 0",
        "PASS: the runtime makes the primary context current",
    ], proc.stderr
