"""Fixtures for the RPC runtime tests: CALC servers (in a thread or a process), the C interop
programs and their server, our interop server process; all on 127.0.0.1."""
from __future__ import annotations

import asyncio

import pytest

from cricket.rpc import Server, ServerThread
from cricket.rpc.transport import new_event_loop
from rpc_calc import CalcV1, CalcV2
from record_impls import record_impls
from rpc_peers import CInterop, CServer, ServerProcess


class Hooks:
    def __init__(self) -> None:
        self.connected: list[int] = []
        self.disconnected: list[int] = []

    def on_connect(self, cid, peer):
        self.connected.append(cid)

    def on_disconnect(self, cid):
        self.disconnected.append(cid)


@pytest.fixture(params=["uvloop", "asyncio"])
def loop_factory(request):
    """The event loop a ServerThread runs on: uvloop (skipped where it is not installed) and asyncio's."""
    if request.param == "uvloop":
        pytest.importorskip("uvloop")
        return new_event_loop
    return asyncio.new_event_loop


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



@pytest.fixture(scope="module")
def calc_process():
    sp = ServerProcess("rpc_calc:CalcV1", "rpc_calc:CalcV2", extra=("--max-record", "1048576"))
    yield sp
    sp.stop()


@pytest.fixture(scope="session")
def c_interop(tmp_path_factory):
    return CInterop(tmp_path_factory.mktemp("c_interop"))


@pytest.fixture
def c_server(c_interop):
    srv = CServer(c_interop.server)
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def py_interop_server():
    sp = ServerProcess("rpc_interop:InteropServer")
    yield sp
    sp.stop()


@pytest.fixture(params=record_impls(), ids=lambda m: m.__name__)
def rec(request):
    """Each record-marking module in turn (pure-Python twin, Cython)."""
    return request.param
