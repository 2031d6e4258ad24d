"""Helpers for the client runtime tests: paths, a real cricket server (emu backend) on a Unix
socket, and a runner that starts a program through ``cricket run``."""
from __future__ import annotations

import importlib
import importlib.util
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest


ROOT = Path(__file__).resolve().parents[2]
SHIM = ROOT / "cricket" / "_preload" / "libcricket-cudart.so"
EXAMPLES_OUT = ROOT / "build" / "examples"


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module          # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


examples_build = _load(ROOT / "examples" / "build.py", "cricket_examples_build")
PROGRAMS = ROOT / "tests" / "client_runtime" / "programs"


def build_program(tmp_path_factory, name: str, *flags: str) -> Path:
    """``programs/NAME.cu`` built by nvcc with ``-cudart shared`` (and ``flags``) into a fresh
    temporary folder; skips the test when nvcc is missing."""
    import shutil
    import pytest
    if not shutil.which("nvcc"):
        pytest.skip("nvcc (CUDA 13) not found on PATH")
    exe = tmp_path_factory.mktemp(name) / name
    r = subprocess.run(["nvcc", "-cudart", "shared", *flags, "-o", str(exe), str(PROGRAMS / f"{name}.cu")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return exe


class Server:
    """A ``cricket server --backend emu`` process on a Unix socket."""

    def __init__(self, directory: Path, backend: str = "emu") -> None:
        self.address = str(directory / "server.sock")
        ready = directory / "ready"
        self.log = directory / "server.log"
        self.process = subprocess.Popen(
            [sys.executable, "-m", "cricket", "server", "--unix", self.address, "--backend", backend,
             "--ready-file", str(ready)], stdout=open(self.log, "wb"), stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"}, cwd=ROOT)
        deadline = time.monotonic() + 60
        while not ready.exists():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"cricket server did not start:\n{self.log.read_text()}")
            time.sleep(0.05)

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def stats(self) -> dict[str, int]:
        from cricket.client.api import connect
        with connect(self.address) as conn:
            return conn.server_stats()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def implementation(name: str):
    """One of a compiled module and its twin, by name; a compiled one not built skips the test."""
    try:
        return importlib.import_module(name)
    except ImportError:
        pytest.skip(f"{name} is not built (make build)")


def runtimes(monkeypatch, address: str):
    """A fixture's body: yields ``connect()``, which makes a new ``Runtime`` (the process state)
    connected to the server at ``address``; closes them all afterwards."""
    from cricket.client.runtime import Runtime
    monkeypatch.setenv("CRICKET_SERVER", address)
    made = []

    def connect() -> Runtime:
        rt = Runtime()
        rt.conn     # noqa: B018 -- connects
        made.append(rt)
        return rt
    yield connect
    for rt in made:
        rt.conn.close()


def cricket_run(args: list[str], *, server: str | None = None, env: dict[str, str] | None = None,
                timeout: float = 120, backend: str = "emu") -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "cricket", "run"]
    if server:
        cmd += ["--server", server]
    if backend:
        cmd += ["--backend", backend]
    return subprocess.run([*cmd, "--", *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})}, cwd=ROOT)
