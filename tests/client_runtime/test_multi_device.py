"""Two devices on one emu server (``--backend emu=devices=2``): the self-checking example
examples/multi_device.cu, built with ``-cudart shared`` and with NVIDIA's static cudart, passes
through `cricket run`: per-device memory, kernels and ``__device__`` variables, copies between the
devices, PCI bus ids and stream priorities; and examples/peer_access.cu: kernels on each device
reading, writing and atomically updating the other's memory once peer access is enabled."""
from __future__ import annotations

import pytest

from client_runtime_support import ROOT, Server, cricket_run, examples_build

# 256 MiB arenas: each device's free memory is its arena's (below the server's memory budget)
TWO_DEVICES = "emu=devices=2,memory=256M"


@pytest.fixture(scope="module")
def two_device_server(tmp_path_factory) -> Server:
    s = Server(tmp_path_factory.mktemp("two-devices"), backend=TWO_DEVICES)
    yield s
    s.stop()


def _passes(res) -> None:
    assert res.returncode == 0, res.stdout + res.stderr
    assert "PASS: two devices" in res.stdout and "FAIL" not in res.stdout, res.stdout


def _peers_pass(res) -> None:
    assert res.returncode == 0, res.stdout + res.stderr
    assert "PASS: peer access" in res.stdout and "FAIL" not in res.stdout, res.stdout
    # each device's kernel read all of the other's values and counted each in the other's memory
    for d in (0, 1):
        assert f"device {d}: 0 of 3000 values from device {1 - d} wrong; 3000 counted here" in res.stdout
    # after access was disabled, the kernel writing the peer's memory faulted and said where
    assert "CUDA_ERROR_ILLEGAL_ADDRESS" in res.stderr and "touch" in res.stderr, res.stderr


@pytest.mark.nvcc
def test_two_devices_example_passes(examples, two_device_server):
    res = cricket_run([str(examples["multi_device"])], server=two_device_server.address)
    _passes(res)
    # each device is found again by the PCI bus id it reports, and the two ids differ
    ids = [line.rsplit(" ", 1)[1] for line in res.stdout.splitlines() if "PCI bus id" in line]
    assert len(ids) == 2 and ids[0] != ids[1]


@pytest.mark.nvcc
def test_two_devices_example_passes_with_static_cudart(shim, two_device_server, run_lock):
    from cricket.client import driver_env
    if not driver_env.available():
        pytest.skip("the libcuda.so.1 replacement is not built; run make build")
    with run_lock("examples"):
        static = examples_build.build(["multi_device", "peer_access"], ROOT / "build" / "examples-static",
                                      cudart="static")
    _passes(cricket_run([str(static["multi_device"])], server=two_device_server.address))
    _peers_pass(cricket_run([str(static["peer_access"])], server=two_device_server.address))


@pytest.mark.nvcc
def test_kernels_reach_the_peers_memory_once_access_is_enabled(examples, two_device_server):
    _peers_pass(cricket_run([str(examples["peer_access"])], server=two_device_server.address))


@pytest.mark.nvcc
def test_one_device_server_reports_one(examples, server):
    res = cricket_run([str(examples["multi_device"])], server=server.address)
    assert res.returncode == 1 and "FAIL: 1 device(s)" in res.stdout, res.stdout + res.stderr
