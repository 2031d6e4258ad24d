"""``python -m cricket.rpc serve --workers N``: N processes share the listeners, connections are
handed to them in turn and stay where they land, and the server stops as one."""
from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from cricket.rpc import Client
from rpc_calc import CalcClient
from rpc_peers import ServerProcess


def _workers(pid: int) -> list[int]:
    return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def _sockets(pid: int) -> int:
    """The process's open sockets; a descriptor closed while the list is read (a file the worker
    was still reading as it started) is not one."""
    count = 0
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            count += os.readlink(fd).startswith("socket:")
        except FileNotFoundError:
            pass
    return count


@pytest.mark.parametrize("where", ["tcp", "unix"])
def test_connections_spread_over_the_workers_and_keep_their_state(tmp_path, where):
    path = tmp_path / "calc.sock"
    sp = ServerProcess("rpc_calc:CalcV1", extra=("--workers", "2", "--listen", str(path)))
    try:
        workers = _workers(sp.proc.pid)
        assert len(workers) == 2
        before = {w: _sockets(w) for w in workers}
        clients = [Client(sp.address if where == "tcp" else str(path)) for _ in range(16)]
        try:
            for i, rpc in enumerate(clients):
                calc = CalcClient(rpc)
                assert calc.ADD(i, 1) == i + 1
                for _ in range(i % 3):
                    calc.LOG("x")
            for i, rpc in enumerate(clients):     # per-connection state, kept where it was made
                assert CalcClient(rpc).COUNT() == i % 3
            taken = {w: _sockets(w) - before[w] for w in workers}
        finally:
            for rpc in clients:
                rpc.close()
    finally:
        log = sp.stop()
    assert sorted(taken.values()) == [8, 8], taken      # handed out in turn
    assert sp.proc.returncode == 0, log
    assert "Traceback" not in log
    assert not path.exists()
    assert not any(Path(f"/proc/{w}").exists() and "zombie" not in Path(f"/proc/{w}/status").read_text().lower()
                   for w in workers)


def test_a_worker_that_dies_stops_the_server(tmp_path):
    sp = ServerProcess("rpc_calc:CalcV1", extra=("--workers", "2"))
    try:
        victim, other = _workers(sp.proc.pid)
        os.kill(victim, signal.SIGKILL)
        sp.proc.wait(timeout=30)
    finally:
        log = sp.stop()
    assert sp.proc.returncode != 0
    assert f"server worker {victim} ended" in log
    deadline = time.monotonic() + 10
    while Path(f"/proc/{other}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not Path(f"/proc/{other}").exists()


def test_register_with_several_workers_is_refused():
    with pytest.raises(RuntimeError, match="--register works with one worker"):
        ServerProcess("rpc_calc:CalcV1", extra=("--workers", "2", "--register"))
