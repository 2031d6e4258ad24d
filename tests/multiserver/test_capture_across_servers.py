"""Stream capture with devices of two servers whose streams get the same server handles (each
server numbers its session's streams from 1): whether a capturing stream is non-blocking follows
the application's stream, not a server handle another server also hands out."""
from __future__ import annotations

import pytest


@pytest.mark.nvcc
def test_non_blocking_streams_of_two_servers_do_not_collide(servers, across_servers, run_across):
    res = run_across([s.address for s in servers], across_servers, "capture", 0, 1)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "legacy-stream work while a non-blocking stream of device 0 captures: cudaSuccess" in res.stdout
    assert ("legacy-stream work while a blocking stream of device 1 captures: "
            "cudaErrorStreamCaptureImplicit") in res.stdout
