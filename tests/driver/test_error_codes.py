"""Failures answered as NVIDIA's driver answers them, and what NVIDIA's own cudart makes of them.

How the codes were established (static cudart 13.0 on this library, calls traced with gdb):
cudart makes no driver call of its own before cuLaunchKernel, cuMemFree_v2 (cudaFree, also of 0)
or cuStreamSynchronize, and hands the driver's CUresult on unchanged as the cudaError_t; the test
knob CRICKET_DRIVER_FAIL (a forwarded call returns a chosen code) shows it below. So the codes a
program sees through static cudart are the driver's own, and the libcudart shim gives the same."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cricket.client import driver_env
from cricket.client.local_server import LocalServer
from cricket.client.run_cli import SHIM, libpython

pytestmark = pytest.mark.nvcc

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def built(tmp_path_factory, driver_dir) -> dict[str, Path]:
    if not libpython():
        pytest.skip("this Python has no shared libpython for a native program to embed")
    out = tmp_path_factory.mktemp("error-programs")
    programs = {"driver": out / "driver_errors", "static": out / "error_passthrough"}
    subprocess.run(["nvcc", "-o", str(programs["driver"]), str(HERE / "programs" / "driver_errors.cu"),
                    f"-L{driver_dir}", "-l:libcuda.so.1"], check=True)
    subprocess.run(["nvcc", "-o", str(programs["static"]), str(HERE / "cuda" / "error_passthrough.cu")], check=True)
    return programs


def run(program: Path, driver_dir: Path, server: LocalServer, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CRICKET_", "CUDA_VISIBLE")) and k not in ("LD_PRELOAD", "PYTHONHOME")}
    env.update(LD_LIBRARY_PATH=str(driver_dir), CRICKET_SERVER=server.address, CRICKET_LIBPYTHON=libpython(),
               CRICKET_PYTHON=sys.executable, CRICKET_PYTHONPATH=str(ROOT), **extra)
    proc = subprocess.run([str(program)], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return dict(line.split(" ", 1) for line in proc.stdout.splitlines())


def test_driver_answers_failures_as_nvidias_driver(built, driver_dir, server):
    got = run(built["driver"], driver_dir, server)
    assert got["free_null"] == "0"                 # cudaFree(0) "performs no operation"; cudart passes the 0 on
    assert got["free_freed"] == "1"                # CUDA_ERROR_INVALID_VALUE (cuMemFree docs)
    assert got["free_host"] == "1"
    # a CUfunction: CUDA_ERROR_INVALID_VALUE, as numba#1055 and lupine#439 (driver 590.48.01) report
    assert got["function_4096"] == "1" and got["function_grid0"] == "1"
    # a CUkernel, as cudart launches: the value cudart reports as cudaErrorInvalidConfiguration
    assert got["kernel_4096"] == "9" and got["kernel_grid0"] == "9"
    assert got["kernel_shared_1m"] == "1"         # too much shared memory: invalid value either way
    assert got["kernel_32"] == "0" and got["sync"] == "0"
    assert got["sync_destroyed_stream"] == "400"   # CUDA_ERROR_INVALID_HANDLE


def test_static_cudart_reports_the_drivers_codes_unchanged(built, driver_dir, server):
    got = run(built["static"], driver_dir, server)
    assert got == {"malloc": "0 cudaSuccess", "launch": "0 cudaSuccess", "stream_sync": "0 cudaSuccess",
                   "free": "0 cudaSuccess"}
    got = run(built["static"], driver_dir, server,
              CRICKET_DRIVER_FAIL="cuLaunchKernel=701,cuStreamSynchronize=709,cuMemFree=1")
    assert got["launch"] == "701 cudaErrorLaunchOutOfResources"
    assert got["stream_sync"] == "709 cudaErrorContextIsDestroyed"
    assert got["free"] == "1 cudaErrorInvalidValue"
    # a code cuda.h has no name for goes through as well: 9 is how the runtime's
    # cudaErrorInvalidConfiguration reaches a static-cudart program
    got = run(built["static"], driver_dir, server, CRICKET_DRIVER_FAIL="cuLaunchKernel=9")
    assert got["launch"] == "9 cudaErrorInvalidConfiguration"
    assert got["free"] == "0 cudaSuccess"


# ------------------------------------------------------------------ both paths, one answer

RUNTIME_ERRORS = {
    "launch_4096_threads": "9 cudaErrorInvalidConfiguration",   # cudaErrorInvalidConfiguration docs:
    "launch_block_z_128": "9 cudaErrorInvalidConfiguration",    # "too many threads or blocks"
    "launch_grid_y_70000": "9 cudaErrorInvalidConfiguration",
    "launch_grid_0": "9 cudaErrorInvalidConfiguration",
    "launch_1mib_shared": "1 cudaErrorInvalidValue",
    "launch_1024_threads": "0 cudaSuccess",
    "free_host_pointer": "1 cudaErrorInvalidValue",             # cudaFree docs (not the deprecated 17)
    "free_null": "0 cudaSuccess",                               # "no operation is performed"
    "free_freed": "1 cudaErrorInvalidValue",
    "free_interior": "1 cudaErrorInvalidValue",
    "memcpy_from_freed": "1 cudaErrorInvalidValue",
    "sync_destroyed_stream": "400 cudaErrorInvalidResourceHandle",
    "query_destroyed_event": "400 cudaErrorInvalidResourceHandle",
    "set_device_count": "101 cudaErrorInvalidDevice",            # cudart checks the ordinal itself
    "set_device_negative": "101 cudaErrorInvalidDevice",
    "attributes_pageable": "0 cudaSuccess", "attributes_pageable_type": "0",   # cudaMemoryTypeUnregistered
    "attributes_device_type": "2", "attributes_interior_type": "2", "attributes_pinned_type": "1",
}


def test_static_and_shared_cudart_give_the_same_errors(tmp_path, server):
    if not driver_env.available() or not SHIM.exists():
        pytest.skip("the libcuda.so.1 replacement or the libcudart shim is not built; run make build")
    if not libpython():
        pytest.skip("this Python has no shared libpython for a native program to embed")
    outputs = {}
    for cudart in ("static", "shared"):
        exe = tmp_path / f"runtime_errors_{cudart}"
        subprocess.run(["nvcc", "-cudart", cudart, "-o", str(exe), str(HERE / "cuda" / "runtime_errors.cu")], check=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CRICKET_", "CUDA_VISIBLE"))}
        proc = subprocess.run([sys.executable, "-m", "cricket", "run", "--server", server.address, "--", str(exe)],
                              capture_output=True, text=True, env=env, timeout=120, cwd=ROOT)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        outputs[cudart] = dict(line.split(" ", 1) for line in proc.stdout.splitlines())
    assert outputs["static"] == outputs["shared"]
    got = outputs["static"]
    assert {k: got[k] for k in RUNTIME_ERRORS} == RUNTIME_ERRORS
