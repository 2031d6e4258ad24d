"""CuPy's wheel embeds its own static cudart (13.2 in CuPy 14.2), invisible to a runtime shim:
with the cricket libcuda.so.1 in front it initialises against our export tables and integrity
check and reports the snapshot's device. Needs cupy-cuda13x; allocation is forwarded to the
server in a later step, so it is expected to answer cudaErrorNotSupported for now."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytest.importorskip("cupy", reason="cupy-cuda13x not installed")

PROGRAM = r"""
import cupy
from cupy.cuda import runtime
print("count", runtime.getDeviceCount())
print("runtime", runtime.runtimeGetVersion())
print("driver", runtime.driverGetVersion())
props = runtime.getDeviceProperties(0)
print("name", props["name"].decode())
print("cc", props["major"], props["minor"])
try:
    cupy.arange(4)
    print("alloc ok")
except cupy.cuda.runtime.CUDARuntimeError as exc:
    print("alloc", exc.status)
"""


def test_cupy_embedded_cudart_initialises_against_the_driver(driver_dir):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CRICKET_DRIVER_", "CRICKET_SERVER"))}
    env.update(LD_LIBRARY_PATH=str(driver_dir), CRICKET_LOG="DEBUG")
    proc = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = dict(line.split(" ", 1) for line in proc.stdout.splitlines())
    assert got["count"] == "1"
    assert got["driver"] == "13000"
    assert got["name"] == "cricket emulated sm_75" and got["cc"] == "7 5"
    runtime = int(got["runtime"])
    assert runtime >= 13000
    for call in range(3):                   # the embedded cudart ran its own integrity check
        assert f"integrity check version {runtime + call}" in proc.stderr
    assert got["alloc"] == "3"
    assert "CRICKET_SERVER" in proc.stderr
