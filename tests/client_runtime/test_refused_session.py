"""No session with the server (a wrong token, a backend it lacks, no server at the address): one
log line that names the cause, and cudaErrorDevicesUnavailable from the program's calls, through
the libcudart shim and through NVIDIA's static cudart on the libcuda replacement alike."""
from __future__ import annotations

from pathlib import Path

import pytest

from client_runtime_support import ROOT, Server, cricket_run, examples_build

TOKEN = "the-right-token"


@pytest.fixture(scope="module")
def device_info(examples, run_lock) -> dict[str, Path]:
    with run_lock("examples"):
        static = examples_build.build(["device_info"], ROOT / "build" / "examples-static", cudart="static")
    return {"shared": examples["device_info"], "static": static["device_info"]}


@pytest.fixture(scope="module")
def token_server(tmp_path_factory) -> Server:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CRICKET_TOKEN", TOKEN)        # the server's --token default
        server = Server(tmp_path_factory.mktemp("token-server"))
    yield server
    server.stop()


def _error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "ERROR" in line]


@pytest.mark.parametrize("cudart", ["shared", "static"])
@pytest.mark.parametrize("token, backend, cause", [
    ("wrong", "emu", "refused this process: wrong or missing token"),
    (TOKEN, "cuda", "refused this process: backend 'cuda' is not loaded"),
])
def test_a_refused_session_is_reported_once_and_blamed_right(device_info, token_server, cudart, token,
                                                            backend, cause):
    result = cricket_run([str(device_info[cudart])], server=token_server.address, backend=backend,
                         env={"CRICKET_TOKEN": token})
    assert result.returncode != 0
    assert "cudaErrorDevicesUnavailable" in result.stdout + result.stderr
    errors = _error_lines(result.stderr)
    assert len(errors) == 1 and cause in errors[0], result.stderr
    assert "cannot reach" not in result.stderr


@pytest.mark.parametrize("cudart", ["shared", "static"])
def test_an_unreachable_server_is_reported_once(device_info, tmp_path, cudart):
    result = cricket_run([str(device_info[cudart])], server=str(tmp_path / "no-server.sock"))
    assert result.returncode != 0
    assert "cudaErrorDevicesUnavailable" in result.stdout + result.stderr
    errors = _error_lines(result.stderr)
    assert len(errors) == 1 and "cannot reach the cricket server" in errors[0], result.stderr
