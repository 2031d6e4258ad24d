"""Fixtures for the RPC runtime tests: a CALC server (versions 1 and 2) on loopback."""
from __future__ import annotations

import pytest

from cricket.rpc import Server, ServerThread
from rpc_calc import CalcV1, CalcV2


class Hooks:
    def __init__(self) -> None:
        self.connected: list[int] = []
        self.disconnected: list[int] = []

    def on_connect(self, cid, peer):
        self.connected.append(cid)

    def on_disconnect(self, cid):
        self.disconnected.append(cid)


@pytest.fixture
def hooks():
    return Hooks()


@pytest.fixture
def calc_server(hooks):
    """A CALC server in a background thread on 127.0.0.1 (an ephemeral port)."""
    server = Server([CalcV1(), CalcV2()], on_connect=hooks.on_connect,
                    on_disconnect=hooks.on_disconnect, max_record_size=8 * 1024 * 1024)
    with ServerThread(server, ("127.0.0.1", 0)) as st:
        yield st


@pytest.fixture
def unix_server(tmp_path):
    path = str(tmp_path / "calc.sock")
    with ServerThread(Server([CalcV1()]), path) as st:
        yield st


HERE = __import__("pathlib").Path(__file__).resolve().parent


class ServerProcess:
    """``python -m cricket.rpc serve`` in a child process, on 127.0.0.1 (an ephemeral port)."""

    def __init__(self, *specs: str, extra: tuple[str, ...] = ()) -> None:
        import os
        import subprocess
        import sys
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            [str(HERE), str(HERE.parent.parent), os.environ.get("PYTHONPATH", "")]))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "cricket.rpc", "serve", "--listen", "127.0.0.1:0", *extra,
             *specs], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        line = self.proc.stdout.readline()
        if not line.startswith("listening "):
            self.proc.kill()
            raise RuntimeError(f"server did not start: {line!r} {self.proc.stderr.read()}")
        host, _, port = line.split()[1].rpartition(":")
        self.address = (host, int(port))

    def stop(self) -> str:
        """Stop the server; returns its log (stderr)."""
        self.proc.terminate()
        try:
            _, err = self.proc.communicate(timeout=10)
        except Exception:
            self.proc.kill()
            _, err = self.proc.communicate()
        return err


@pytest.fixture(scope="module")
def calc_process():
    sp = ServerProcess("rpc_calc:CalcV1", "rpc_calc:CalcV2", extra=("--max-record", "1048576"))
    yield sp
    sp.stop()
