"""Launch attributes of cudaLaunchKernelExC (cricket.client.launch_attributes): a CUDA program
compiled by nvcc at test time, run through the libcudart shim against a real server (emu)."""
from __future__ import annotations

import pytest

from client_runtime_support import build_program, cricket_run


@pytest.fixture(scope="module")
def program(shim, tmp_path_factory):
    return build_program(tmp_path_factory, "launch_attributes")


@pytest.mark.nvcc
def test_hint_attributes_are_accepted_and_unhonourable_ones_refused(server, program):
    res = cricket_run([str(program)], server=server.address)
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout.splitlines() == [
        "hints: cudaSuccess, event cudaSuccess, 0 wrong",
        "cooperative: cudaSuccess, 0 wrong",
        "cluster 2x1x1: cudaErrorNotSupported, last error cudaErrorNotSupported, 0 changed",
        "unknown id 99: cudaErrorNotSupported, last error cudaErrorNotSupported, 0 changed",
        "PASS",
    ]


@pytest.mark.nvcc
def test_each_refusal_is_one_log_line_naming_the_attribute(server, program):
    res = cricket_run([str(program)], server=server.address)
    assert res.returncode == 0, res.stdout + res.stderr
    lines = [line for line in res.stderr.splitlines() if "cudaErrorNotSupported" in line]
    assert len(lines) == 2, res.stderr
    for name in ("cudaLaunchAttributeClusterDimension", "cudaLaunchAttribute99 (unknown)"):
        assert sum(name in line for line in lines) == 1, res.stderr
    assert "cudaLaunchAttributePriority" not in res.stderr
