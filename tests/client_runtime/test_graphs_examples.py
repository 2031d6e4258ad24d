"""CUDA graphs, stream capture and host functions through the libcudart shim (-cudart shared), on a
real emu server: examples/graphs.cu (capture across two streams joined by events, an explicit graph
with every node type cricket replays, exec update, clone, the capture errors CUDA documents) and
examples/host_callbacks.cu (host functions see the stream's earlier work, its later work sees what
they wrote). The same programs built with NVIDIA's static cudart run in
tests/driver/test_examples_static.py, through the driver face."""
from __future__ import annotations

import pytest

from client_runtime_support import cricket_run

pytestmark = pytest.mark.nvcc


@pytest.mark.parametrize("name", ["graphs", "host_callbacks"])
def test_graph_examples_pass(name, examples, server):
    res = cricket_run([str(examples[name])], server=server.address)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "FAIL" not in res.stdout
    last = {"graphs": "PASS: CUDA graphs", "host_callbacks": "PASS: host functions in stream order"}[name]
    assert res.stdout.splitlines()[-1] == last

