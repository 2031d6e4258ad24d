"""At its default level a server tells its operator about its life and its clients: backend
loads, sessions opening (with who: pid and user on a Unix socket) and closing (with what was
freed), rejected tokens, and a shutdown that closes live sessions."""
from __future__ import annotations

import getpass
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cricket.client.api import CudaError, connect

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def quiet_env() -> dict[str, str]:
    """The environment of a server started as an operator would: no CRICKET_LOG."""
    env = {k: v for k, v in os.environ.items() if k != "CRICKET_LOG"}
    env["PYTHONPATH"] = str(ROOT)
    return env


def start(tmp_path: Path, env: dict[str, str], *args: str) -> tuple[subprocess.Popen, str]:
    sock = str(tmp_path / "s.sock")
    ready = tmp_path / "ready"
    proc = subprocess.Popen([sys.executable, "-m", "cricket", "server", "--unix", sock, "--ready-file",
                             str(ready), *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, cwd=ROOT, env=env)
    deadline = time.monotonic() + 60
    while not ready.exists():
        assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read()
        time.sleep(0.05)
    return proc, sock


def stop(proc: subprocess.Popen, sig: int = signal.SIGINT) -> str:
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    return err


def test_sessions_tokens_and_shutdown_are_logged_at_the_default_level(tmp_path, quiet_env):
    proc, sock = start(tmp_path, quiet_env, "--backend", "emu", "--token", "secret")
    try:
        with connect(sock, token="secret", shared_memory=False) as conn:
            conn.alloc(4096)
            conn.alloc(1000)
        with pytest.raises(CudaError):
            connect(sock, token="wrong", shared_memory=False)
        live = connect(sock, token="secret", shared_memory=False)
        live.alloc(64)
        time.sleep(0.2)     # the closed sessions' teardown runs on their workers
    finally:
        err = stop(proc)
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    me = f"pid {os.getpid()} user {getpass.getuser()}"
    assert "loaded backend emu" in err
    hello = [line for line in err.splitlines() if "HELLO from" in line]
    assert hello and all(me in line and " INFO " in line for line in hello), err
    closed = [line for line in err.splitlines() if "closed; freed" in line]
    assert any("2 allocations" in line and "5096 bytes" in line for line in closed), err
    rejected = [line for line in err.splitlines() if "authentication failed" in line]
    assert len(rejected) == 1 and me in rejected[0] and "wrong token" in rejected[0], err
    assert "stopping: closing 1 live session(s)" in err
    assert any("1 allocations" in line and "64 bytes" in line for line in closed), err
    assert err.rstrip().endswith("cricket server stopped"), err


def test_cricket_log_still_sets_the_level(tmp_path, quiet_env):
    proc, sock = start(tmp_path, {**quiet_env, "CRICKET_LOG": "warning"}, "--backend", "emu")
    try:
        with connect(sock, shared_memory=False) as conn:
            conn.alloc(16)
    finally:
        err = stop(proc, signal.SIGTERM)
    assert proc.returncode == 0 and "Traceback" not in err
    assert "HELLO from" not in err and "loaded backend" not in err and "stopped" not in err
