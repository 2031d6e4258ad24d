"""What a program gets when the servers of its list cannot be used together at its first call: one
error line naming the server and what to do, and cudaErrorDevicesUnavailable for its calls."""
from __future__ import annotations

import pytest

from cricket.client.local_server import LocalServer


def _one_error_line(res, *words):
    assert res.returncode == 1, res.stdout + res.stderr
    assert "cudaErrorDevicesUnavailable" in res.stdout, res.stdout
    errors = [line for line in res.stderr.splitlines() if "ERROR cricket.client" in line]
    assert len(errors) == 1, res.stderr
    for word in words:
        assert word in errors[0], errors[0]
    assert "Traceback" not in res.stderr


@pytest.mark.nvcc
def test_an_unreachable_server_in_the_list_is_named(servers, across_servers, run_across, tmp_path):
    missing = str(tmp_path / "nobody.sock")
    res = run_across([servers[0].address, missing], across_servers, "list")
    _one_error_line(res, missing, "server 2 of 2", "take it out of CRICKET_SERVER")


@pytest.mark.nvcc
def test_devices_past_the_emu_placement_limit_are_refused(across_servers, run_across):
    """emu places devices at combined indices 0-7 (its MAX_DEVICES): 4 + 5 devices do not fit."""
    first = LocalServer(["emu=devices=4,memory=64M"])
    second = LocalServer(["emu=devices=5,memory=64M"])
    try:
        res = run_across([first.address, second.address], across_servers, "list")
        _one_error_line(res, second.address, "index 4", "MAX_DEVICES = 8")
    finally:
        first.stop()
        second.stop()
