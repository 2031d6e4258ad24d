"""A program that leaves the replies to asynchronous device-to-host copies unread while it sends
large host-to-device copies finishes, through the socket path (``CRICKET_SHM=0``, as with a remote
server) and through shared memory: the RPC client reads replies while a send waits for room."""
from __future__ import annotations

import shutil
import subprocess

import pytest

from client_runtime_support import ROOT, cricket_run

PROGRAM = ROOT / "tests" / "client_runtime" / "programs" / "copies_both_ways.cu"


@pytest.fixture(scope="module")
def program(tmp_path_factory, shim):
    if not shutil.which("nvcc"):
        pytest.skip("nvcc (CUDA 13) not found on PATH")
    exe = tmp_path_factory.mktemp("duplex") / "copies_both_ways"
    subprocess.run(["nvcc", "-cudart", "shared", "-o", str(exe), str(PROGRAM)], check=True,
                   capture_output=True, timeout=300)
    return exe


@pytest.mark.nvcc
@pytest.mark.parametrize("shm", ["0", "1"])
def test_async_copies_both_ways_before_one_sync_finish(program, server, shm):
    # Before the fix the socket path hung here forever (no client timeout by default).
    res = cricket_run([str(program)], server=server.address, env={"CRICKET_SHM": shm}, timeout=240)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "PASS: 24 MiB each way" in res.stdout
