"""Fixtures of the hostile-client tests: real `cricket server` processes."""
import pytest

from hostile_peers import SERVER_PATH
from server_process import ServerProcess


@pytest.fixture
def start_server(tmp_path):
    """Start servers with given CLI arguments; all are stopped after the test."""
    started: list = []

    def start(*args: str, env: dict[str, str] | None = None):
        server = ServerProcess(tmp_path, *args, env={"PYTHONPATH": SERVER_PATH, **(env or {})})
        started.append(server)
        return server

    yield start
    for s in started:
        s.stop()
