"""Helpers for the tests of watching a server: the cricket command, a real `cricket server` (emu)
and a client that keeps it busy."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from cricket.client.api import CudaError, connect

ROOT = Path(__file__).resolve().parents[2]
VADD = ROOT / "tests" / "server" / "cuda" / "vadd.cu"


def cricket_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CRICKET_")}
    env["PYTHONPATH"] = str(ROOT)
    env.update(extra)
    return env


def cricket(*args: str, timeout: float = 120, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cricket", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT, env=cricket_env(**env))


class Server:
    def __init__(self, tmp: Path, *args: str) -> None:
        ready = tmp / f"ready-{time.monotonic_ns()}"
        self.log = tmp / f"server-{time.monotonic_ns()}.log"
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "cricket", "server", "--backend", "emu", "--ready-file", str(ready),
                 *args], stdout=log, stderr=subprocess.STDOUT, cwd=ROOT, env=cricket_env())
        deadline = time.monotonic() + 60
        while not ready.exists():
            assert self.process.poll() is None and time.monotonic() < deadline, self.log.read_text()
            time.sleep(0.05)
        self.address = ready.read_text().strip()
        self.port = int(self.address.rsplit(":", 1)[1]) if "/" not in self.address else 0

    def stop(self) -> str:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(30)
        return self.log.read_text()


N = 1024


def busy_client(address: str, fatbin, token: str = ""):
    """A session holding two buffers and a module, with three kernels run and one failed copy."""
    conn = connect(address, token=token, shared_memory=False)
    a = conn.to_device(np.arange(N, dtype=np.float32))
    c = conn.alloc(N * 4)
    vadd = conn.load_module(fatbin.read_bytes()).get_function("vadd")
    for _ in range(3):
        vadd((N // 128,), (128,), a, a, c, N)
    conn.synchronize()
    assert np.array_equal(c.to_host(np.float32), 2 * np.arange(N, dtype=np.float32))
    with pytest.raises(CudaError):
        conn.memcpy_dtoh(c.device_ptr + N * 4, 4)     # past the end
    return conn
