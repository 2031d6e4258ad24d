"""Fixtures for watching a server: real `cricket server` processes and an nvcc-built kernel."""
from __future__ import annotations

from pathlib import Path

import pytest

from watch_support import VADD, Server


@pytest.fixture
def start_server(tmp_path):
    servers: list[Server] = []

    def start(*args: str) -> Server:
        servers.append(Server(tmp_path, *args))
        return servers[-1]

    yield start
    for s in servers:
        s.stop()


@pytest.fixture(scope="session")
def vadd_fatbin(nvcc_build) -> Path:
    return nvcc_build("-fatbin", "-arch=sm_75", VADD, output="vadd.fatbin")
