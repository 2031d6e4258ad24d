"""Fixtures of the TLS tests: two certificate sets (two CAs) and real `cricket server` processes."""
from __future__ import annotations

import shutil

import pytest

from server_process import ServerProcess


@pytest.fixture(scope="session")
def certs(tmp_path_factory):
    """A CA with a server certificate for localhost/127.0.0.1 and a client certificate."""
    if not shutil.which("openssl"):
        pytest.skip("the openssl command is not installed")
    from cricket.tls_keygen import make_certificates
    return make_certificates(tmp_path_factory.mktemp("certs"))


@pytest.fixture(scope="session")
def other_certs(tmp_path_factory, certs):
    """A second, unrelated CA and its certificates (what a stranger would have)."""
    from cricket.tls_keygen import make_certificates
    return make_certificates(tmp_path_factory.mktemp("other-certs"), client="intruder")


@pytest.fixture
def start_server(tmp_path):
    """Start emu servers with given CLI arguments; all are stopped after the test."""
    started: list = []

    def start(*args: str, env: dict[str, str] | None = None):
        server = ServerProcess(tmp_path, "--backend", "emu", *args, env=env)
        started.append(server)
        return server

    yield start
    for s in started:
        s.stop()


@pytest.fixture(scope="module")
def shared_server(tmp_path_factory):
    """``shared_server(*args)``: an emu server with these CLI arguments, one per set of arguments
    for the whole module, for tests that check a handshake or a session and no server state."""
    servers: dict = {}

    def start(*args: str):
        if args not in servers:
            servers[args] = ServerProcess(tmp_path_factory.mktemp("server"), "--backend", "emu", *args)
        return servers[args]

    yield start
    for s in servers.values():
        s.stop()
