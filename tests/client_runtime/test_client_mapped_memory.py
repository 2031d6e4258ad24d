"""Mapped pinned memory through the libcudart shim (cricket.client.mapped) beyond
examples/mapped_memory.cu: stream order with memsets and asynchronous copies into mapped memory,
pinned memory mapped by cudaHostGetDevicePointer, read-only registration, the calls refused, and a
device reset. A CUDA
program compiled by nvcc at test time, run against a real server (emu)."""
from __future__ import annotations

import pytest

from client_runtime_support import build_program, cricket_run


@pytest.fixture(scope="module")
def program(shim, tmp_path_factory):
    return build_program(tmp_path_factory, "mapped_lifecycle")


@pytest.mark.nvcc
@pytest.mark.parametrize("shm", ["1", "0"], ids=["shared-memory", "socket"])
def test_mapped_memory_in_stream_order_and_across_a_reset(server, program, shm):
    res = cricket_run([str(program)], server=server.address, env={"CRICKET_SHM": shm})
    assert res.returncode == 0, res.stdout + res.stderr
    lines = res.stdout.splitlines()
    assert lines[-1] == "PASS", res.stdout
    assert len(lines) == 17 and all(line.endswith(": ok") for line in lines[:-1]), res.stdout
