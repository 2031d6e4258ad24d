"""examples/split_vector_add.cu through `cricket run`: a vector add split across every visible
device, each slice on its own stream, the whole result checked by the program. On one server with
two devices, on one with one, over the devices of two servers (``--server a,b``), and failing with
a FAIL line and status 1 when a device cannot hold its slice."""
from __future__ import annotations

import importlib.util
import re
import shutil

import pytest

from client_runtime_support import EXAMPLES_OUT, Server, cricket_run, examples_build

N = 1 << 18          # the example's vector length


@pytest.fixture(scope="module")
def split_vector_add(shim):
    if not shutil.which("nvcc"):
        pytest.skip("nvcc (CUDA 13) not found on PATH")
    return str(examples_build.build(["split_vector_add"], EXAMPLES_OUT)["split_vector_add"])


def _passes(res, devices: int) -> None:
    assert res.returncode == 0, res.stdout + res.stderr
    assert f"devices: {devices}\n" in res.stdout, res.stdout
    assert f"PASS: split vector add over {devices} device(s)" in res.stdout and "FAIL" not in res.stdout
    # every element went to exactly one device, in order
    slices = [tuple(map(int, m)) for m in re.findall(r"device \d+: elements \[(\d+), (\d+)\)", res.stdout)]
    assert len(slices) == devices and slices[0][0] == 0 and slices[-1][1] == N
    assert all(a[1] == b[0] for a, b in zip(slices, slices[1:]))


@pytest.mark.nvcc
def test_split_over_the_two_devices_of_one_server(split_vector_add, tmp_path):
    server = Server(tmp_path, backend="emu=devices=2,memory=64M")
    try:
        _passes(cricket_run([split_vector_add], server=server.address), 2)
    finally:
        server.stop()


@pytest.mark.nvcc
def test_one_device_takes_the_whole_vector(split_vector_add, server):
    _passes(cricket_run([split_vector_add], server=server.address), 1)


@pytest.mark.nvcc
def test_a_device_too_small_for_its_slice_fails_the_program(split_vector_add, tmp_path):
    # a 2 MiB arena: one device's slice is the whole vector, three arrays of 1 MiB
    server = Server(tmp_path, backend="emu=memory=2M")
    try:
        res = cricket_run([split_vector_add], server=server.address)
    finally:
        server.stop()
    assert res.returncode == 1 and "FAIL: cudaMalloc" in res.stdout, res.stdout + res.stderr
    assert "cudaErrorMemoryAllocation" in res.stdout


@pytest.mark.nvcc
@pytest.mark.skipif(importlib.util.find_spec("cricket.client.servers") is None,
                    reason="needs the multi-server client (branch multi)")
def test_split_over_the_devices_of_two_servers(split_vector_add, tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = Server(tmp_path / "a", backend="emu=devices=2,memory=64M")
    second = Server(tmp_path / "b", backend="emu=memory=64M")
    try:
        _passes(cricket_run([split_vector_add], server=f"{first.address},{second.address}"), 3)
    finally:
        first.stop()
        second.stop()
