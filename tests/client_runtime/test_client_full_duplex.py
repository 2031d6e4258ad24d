"""A program that leaves the replies to asynchronous device-to-host copies unread while it sends
large host-to-device copies finishes, through the socket path (``CRICKET_SHM=0``, as with a remote
server) and through shared memory: the RPC client reads replies while a send waits for room."""
from __future__ import annotations

import pytest

from client_runtime_support import build_program, cricket_run


@pytest.fixture(scope="module")
def program(tmp_path_factory, shim):
    return build_program(tmp_path_factory, "copies_both_ways")


@pytest.mark.nvcc
@pytest.mark.parametrize("shm", ["0", "1"])
def test_async_copies_both_ways_before_one_sync_finish(program, server, shm):
    # Before the fix the socket path hung here forever (no client timeout by default).
    res = cricket_run([str(program)], server=server.address, env={"CRICKET_SHM": shm}, timeout=240)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "PASS: 24 MiB each way" in res.stdout
