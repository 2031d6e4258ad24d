"""Every example of examples/ built with nvcc's default flags (NVIDIA's static cudart) prints PASS
through `cricket run` on a real emu server: cudart reaches cricket through the package's
libcuda.so.1 (cricket/_driver, built by `make build`). The same examples built with
`-cudart shared` run through the libcudart shim in tests/client_runtime/test_client_examples.py.

The programs are built once into build/examples-static and kept while up to date (examples/build.py)."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cricket.client import driver_env
from cricket.client.run_cli import SHIM, libpython

from .driver_support import ROOT, cricket_run, examples_build

pytestmark = pytest.mark.nvcc

OUT = ROOT / "build" / "examples-static"

# Examples that do not print PASS, and where they run instead.
NOT_SELF_CHECKING = {
    "kernel_lib": "a shared library: dlopen_host and python_host load it",
    "long_running": "runs until its server dies: test_driver_end_to_end",
    "empty_kernel": "a timing program for bench/calls.py: run below with few iterations",
    "multi_device": "needs a server with two devices: tests/client_runtime/test_multi_device.py",
    "peer_access": "needs a server with two devices: tests/client_runtime/test_multi_device.py",
}
SELF_CHECKING = [e.name for e in examples_build.EXAMPLES if e.name not in NOT_SELF_CHECKING]


@pytest.fixture(scope="module")
def static_examples(run_lock) -> dict[str, Path]:
    if not shutil.which("nvcc"):
        pytest.skip("nvcc (CUDA 13) not found on PATH")
    if not driver_env.available():
        pytest.skip(f"the libcuda.so.1 replacement is not built in {driver_env.DRIVER_DIR}; run make build")
    if not SHIM.exists():
        pytest.skip(f"the libcudart shim is not built ({SHIM}); run make build")
    if not libpython():
        pytest.skip("this Python has no shared libpython for a native program to embed")
    with run_lock("examples"):
        return examples_build.build(None, OUT, jobs=2, cudart="static")


@pytest.fixture(scope="module")
def run_example(static_examples, server):
    """``run_example(name)``: the example's run through `cricket run`, once per module (the error
    paths' output is read by two tests)."""
    runs: dict[str, subprocess.CompletedProcess] = {}

    def run(name: str) -> subprocess.CompletedProcess:
        if name not in runs:
            runs[name] = cricket_run([str(static_examples[name])], server)
        return runs[name]
    return run


def test_every_example_is_run_here():
    names = {e.name for e in examples_build.EXAMPLES}
    assert set(NOT_SELF_CHECKING) <= names
    assert len(SELF_CHECKING) + len(NOT_SELF_CHECKING) == len(names)


def test_examples_are_linked_with_static_cudart(static_examples):
    for name in ("vector_add", "error_paths", "device_info"):
        needed = subprocess.run(["readelf", "-d", str(static_examples[name])], capture_output=True,
                                text=True).stdout
        assert "libcudart" not in needed, needed


# error_paths and device_info check the error codes NVIDIA's runtime gives; the others their results
@pytest.mark.parametrize("name", SELF_CHECKING)
def test_static_example_passes_through_cricket_run(run_example, name):
    proc = run_example(name)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PASS" in proc.stdout and "FAIL" not in proc.stdout, proc.stdout


def test_static_error_paths_print_the_runtime_error_names(run_example):
    proc = run_example("error_paths")
    assert "copy from freed device memory: cudaErrorInvalidValue" in proc.stdout
    assert "out-of-bounds kernel reported as cudaErrorIllegalAddress" in proc.stdout, proc.stdout + proc.stderr


def test_python_host_with_a_static_cudart_library(static_examples, server):
    # the Python program's cudart calls go to the libcudart shim, the kernels of libkernel_lib.so
    # (with its own static cudart) through libcuda.so.1: one client state serves both
    proc = cricket_run([sys.executable, str(ROOT / "examples" / "python_host.py"),
                        str(static_examples["kernel_lib"].parent)], server)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PASS: Python host through ctypes (1 device(s), 4 threads)" in proc.stdout


def test_static_timing_example_runs(static_examples, server):
    proc = cricket_run([str(static_examples["empty_kernel"]), "3", "4096"], server)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    timings = dict(line.rsplit(" ", 1) for line in proc.stdout.splitlines())
    assert "registration" in timings and all(float(v) >= 0 for v in timings.values())
