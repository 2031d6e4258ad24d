"""cuda-python's driver bindings on the cricket libcuda.so.1: cuda.pathfinder finds it through
LD_LIBRARY_PATH, cuda.bindings resolves every function through cuGetProcAddress_v2 (legacy and,
with CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM=1, per-thread variants), and the locally answered
calls return the snapshot's values; forwarded calls without a server fail at once. Needs the `cuda` extra (cuda-python)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytest.importorskip("cuda.bindings.driver", reason="cuda-python not installed (pip install -e '.[cuda]')")

PROGRAM = r"""
from cuda.bindings import driver as d
def ok(result):
    err, *values = result if isinstance(result, tuple) else (result,)
    print(err.name, *values)
ok(d.cuInit(0))
ok(d.cuDriverGetVersion())
err, dev = d.cuDeviceGet(0)
ok(d.cuDeviceGetCount())
ok(d.cuDeviceGetName(64, dev))
ok(d.cuDeviceGetAttribute(d.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev))
err, ctx = d.cuDevicePrimaryCtxRetain(dev)
ok(d.cuCtxSetCurrent(ctx))
ok(d.cuCtxGetDevice())
ok(d.cuStreamSynchronize(0))
ok(d.cuDevicePrimaryCtxRelease(dev))
ok(d.cuStreamCopyAttributes(0, 0))
"""


def run(driver_dir, **env) -> subprocess.CompletedProcess:
    # (CRICKET_SERVER too: a test before this one in the same process may have started a server)
    full = {k: v for k, v in os.environ.items()
            if not k.startswith(("CRICKET_DRIVER_", "CUDA_PYTHON_")) and k != "CRICKET_SERVER"}
    full.update(LD_LIBRARY_PATH=str(driver_dir), **env)
    return subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, env=full, timeout=120)


def test_cuda_bindings_driver_calls_answered_locally(driver_dir):
    proc = run(driver_dir)
    assert proc.returncode == 0, proc.stderr
    out = [line.split(" ", 1) for line in proc.stdout.splitlines()]
    assert [o[0] for o in out[:7]] == ["CUDA_SUCCESS"] * 7
    assert out[1][1] == "13000" and out[2][1] == "1"
    assert out[3][1].startswith("b'cricket emulated sm_75")
    assert out[4][1] == "7" and out[6][1] == "<CUdevice 0>"
    # forwarded calls need a server; without CRICKET_SERVER they fail at once and say so
    assert out[7][0] == "CUDA_ERROR_NOT_INITIALIZED"
    assert "CRICKET_SERVER" in proc.stderr
    assert out[8][0] == "CUDA_SUCCESS"
    # the legacy-stream variant is the one asked for by default
    assert out[9][0] == "CUDA_ERROR_NOT_SUPPORTED"
    assert "cuStreamCopyAttributes is not implemented" in proc.stderr


def test_per_thread_default_stream_mode_gets_ptsz_variants(driver_dir):
    proc = run(driver_dir, CUDA_PYTHON_CUDA_PER_THREAD_DEFAULT_STREAM="1")
    assert proc.returncode == 0, proc.stderr
    assert "cuStreamCopyAttributes_ptsz is not implemented" in proc.stderr
