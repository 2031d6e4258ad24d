"""A forked child of a program using two servers opens sessions of its own with both, and child and
parent each copy between devices of the two servers."""
from __future__ import annotations

import pytest


@pytest.mark.nvcc
def test_forked_child_opens_its_own_sessions_with_every_server(servers, across_servers, run_across):
    res = run_across([s.address for s in servers], across_servers, "fork", 0, 2, env={"CRICKET_LOG": "info"})
    assert res.returncode == 0, res.stdout + res.stderr
    for line in ("parent before fork: device 2 from device 0: 0 of 65536 wrong",
                 "child: device 0 from device 2: 0 of 65536 wrong",
                 "parent after the child: device 2 from device 0: 0 of 65536 wrong"):
        assert line in res.stdout
    assert res.stderr.count("connected to 2 servers") == 2, res.stderr      # the parent's, the child's
