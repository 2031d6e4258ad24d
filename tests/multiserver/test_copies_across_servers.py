"""Copies between devices of two servers go through the client and land right: cudaMemcpyPeer both
ways, cudaMemcpyPeerAsync in a stream, cudaMemcpy with cudaMemcpyDefault; devices of one server
keep their own peer access, devices of two servers have none (as CUDA says it). Also through the
Python API's ServerGroup."""
from __future__ import annotations

import pytest

from cricket.client.api import connect


def _copies_pass(res):
    assert res.returncode == 0, res.stdout + res.stderr
    for line in ("peer copy a->b: 0 of 65536 wrong", "peer copy b->a: 0 of 65536 wrong",
                 "cudaMemcpyDefault a->b: 0 of 65536 wrong", "peer copy async b->a (offset): 0 wrong",
                 "PASS: copies between the two devices"):
        assert line in res.stdout, res.stdout


@pytest.mark.nvcc
def test_copies_between_devices_of_two_servers(servers, across_servers, run_across):
    res = run_across([s.address for s in servers], across_servers, "copies", 0, 2)
    _copies_pass(res)
    assert "can access peer 0->2: 0" in res.stdout
    assert "enable peer access 0->2: cudaErrorInvalidDevice" in res.stdout


@pytest.mark.nvcc
def test_copies_between_devices_of_one_server_stay_there(servers, across_servers, run_across):
    res = run_across([s.address for s in servers], across_servers, "copies", 1, 2)
    _copies_pass(res)
    assert "can access peer 1->2: 1" in res.stdout
    assert "enable peer access 1->2: cudaSuccess" in res.stdout


def test_python_api_copies_between_servers(servers):
    np = pytest.importorskip("numpy")
    a, b = (s.address for s in servers)
    with connect(f"{a},{b}") as group:
        assert len(group.devices) == 3
        values = np.arange(3 << 20, dtype=np.int32)            # 12 MiB: more than one chunk
        src = group.device(0).to_device(values)
        dst = group.device(2).alloc(values.nbytes)
        group.copy(dst, src)
        assert (dst.to_host(np.int32) == values).all()
        back = group.device(0).alloc(values.nbytes)
        group.copy(back, dst)
        assert (back.to_host(np.int32) == values).all()
        # buffers of different servers never share an address
        assert int(src) != int(dst) and src.conn is not dst.conn
