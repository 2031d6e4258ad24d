"""``python -m cricket.rpc serve``: one process serving on TCP and a Unix socket at once, stopped
cleanly by SIGTERM."""
from __future__ import annotations

import pytest

from cricket.rpc import Client, ProgUnavail
from rpc_calc import CALC_PROG, CalcClient
from rpc_peers import ServerProcess


def test_serves_tcp_and_unix_listeners_and_stops_cleanly(tmp_path):
    path = tmp_path / "calc.sock"
    sp = ServerProcess("rpc_calc:CalcV1", extra=("--listen", str(path)))
    try:
        for address in (sp.address, str(path)):
            with Client(address) as rpc:
                assert CalcClient(rpc).ADD(2, 3) == 5
                with pytest.raises(ProgUnavail):
                    rpc.null(CALC_PROG + 9, 1)
    finally:
        log = sp.stop()
    assert sp.proc.returncode == 0, log
    assert "Traceback" not in log
    assert not path.exists()


def test_bad_skeleton_spec_is_reported(tmp_path):
    with pytest.raises(RuntimeError, match="module:Class"):
        ServerProcess("rpc_calc")
