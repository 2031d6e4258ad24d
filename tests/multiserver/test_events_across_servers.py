"""A stream of one server waiting on an event of another: the client waits for the event where it
was recorded before the stream's later work is queued, so that work sees what came before the
event (a host function in the waiting stream reads what the other server's kernel wrote)."""
from __future__ import annotations

import pytest


@pytest.mark.nvcc
def test_stream_waits_for_another_servers_event(servers, across_servers, run_across):
    res = run_across([s.address for s in servers], across_servers, "wait", 0, 1, 2000,
                     env={"CRICKET_LOG": "info"})
    assert res.returncode == 0, res.stdout + res.stderr
    assert ("after b's event: a's event cudaSuccess; the host function in b's stream saw 0 of 256 "
            "values wrong") in res.stdout
    # the wait happened in the client, on the event's own server
    assert f"waits for an event of the server {servers[0].address}: waited here" in res.stderr


@pytest.mark.nvcc
def test_stream_waits_for_an_event_of_its_own_server_on_the_server(servers, across_servers, run_across):
    res = run_across([s.address for s in servers], across_servers, "wait", 1, 2, 2000,
                     env={"CRICKET_LOG": "info"})
    assert res.returncode == 0, res.stdout + res.stderr
    assert "PASS: a stream waits for another server's event" in res.stdout
    assert "waited here" not in res.stderr
