"""A real `cricket server` process for the tests (tests/server, and the TLS and hostile-client tests,
which import it from here)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent      # on the server's PYTHONPATH: the plugin backends here
REPO = HERE.parents[1]


class ServerProcess:
    """`python -m cricket server` on a free loopback port; ``address`` is HOST:PORT."""

    def __init__(self, tmp: Path, *args: str, env: dict[str, str] | None = None) -> None:
        self.ready = tmp / f"ready-{time.monotonic_ns()}"
        self.log_path = tmp / f"server-{time.monotonic_ns()}.log"
        self._log = open(self.log_path, "wb")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "cricket", "server", "--listen", "127.0.0.1:0",
             "--ready-file", str(self.ready), *args],
            stdout=self._log, stderr=subprocess.STDOUT, cwd=REPO,
            env={**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), str(REPO)]),
                 "CRICKET_LOG": "info", **(env or {})})
        deadline = time.monotonic() + 60
        while not self.ready.exists():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise AssertionError(f"cricket server did not start:\n{self.output()}")
            time.sleep(0.02)
        self.address = self.ready.read_text().strip()
        self.host, port = self.address.rsplit(":", 1)
        self.port = int(port)

    def output(self) -> str:
        return self.log_path.read_text(errors="replace")

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()
