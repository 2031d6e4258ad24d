"""``python -m cricket.rpc serve``: one process serving on TCP and a Unix socket at once, stopped
cleanly by SIGTERM."""
from __future__ import annotations

import os
import subprocess
import sys

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


def _serve_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cricket.rpc", "serve", *args], capture_output=True,
                          text=True, timeout=60, env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))


def test_help_describes_the_command_and_its_argument_and_nothing_else():
    r = _serve_cli("--help")
    assert r.returncode == 0 and r.stderr == ""
    assert r.stdout.startswith("usage: python -m cricket.rpc serve")
    assert "module:Class names an implementation" in r.stdout
    assert "examples:\n  python -m cricket.rpc serve --listen " in r.stdout


def test_start_prints_program_and_version_in_decimal_and_hex():
    sp = ServerProcess("rpc_calc:CalcV1")
    try:
        line = sp.proc.stdout.readline().strip()
    finally:
        log = sp.stop()
    assert line == f"program {CALC_PROG} (0x{CALC_PROG:08x}) version 1 (0x1)", log
