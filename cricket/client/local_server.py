"""An embedded cricket server: a ``cricket server`` child process on a private Unix socket."""
from __future__ import annotations

import logging
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from cricket.client import driver_env
from cricket.client.tied_child import tied_preexec

log = logging.getLogger(__name__)


class LocalServerError(RuntimeError):
    """The embedded server did not start; the message holds its output."""


class LocalServer:
    """Start ``python -m cricket server --unix PATH`` and wait until it accepts connections."""

    def __init__(self, backends: list[str] | None = None, *, extra_args: list[str] | None = None,
                 env: dict[str, str] | None = None, start_timeout: float = 60.0,
                 tied: bool = False) -> None:
        """``tied``: the server gets SIGTERM when the calling thread ends (``cricket run``, whose
        server must never outlive it); off by default, as a CUDA program's first call, which
        starts a server for the whole process, may come from a short-lived thread."""
        self._dir = tempfile.TemporaryDirectory(prefix="cricket-")
        self.socket_path = str(Path(self._dir.name) / "server.sock")
        ready = Path(self._dir.name) / "ready"
        self._log_path = Path(self._dir.name) / "server.log"
        cmd = [sys.executable, "-m", "cricket", "server", "--unix", self.socket_path,
               "--ready-file", str(ready)]
        for b in backends or []:
            cmd += ["--backend", b]
        cmd += extra_args or []
        self._log = open(self._log_path, "wb")
        # CUDA_VISIBLE_DEVICES is the client's, applied once to the server's device list
        # (cricket.client.visible_devices): the server itself offers every device
        server_env = driver_env.server_environment(dict(os.environ))
        server_env.pop("CUDA_VISIBLE_DEVICES", None)
        # Only the server's warnings and errors reach the program's terminal, unless CRICKET_LOG asks.
        if not server_env.get("CRICKET_LOG", "").strip():
            server_env["CRICKET_LOG"] = "warning"
        self.process = subprocess.Popen(cmd, stdout=self._log, stderr=subprocess.STDOUT,
                                        env={**server_env, **(env or {})},
                                        preexec_fn=tied_preexec() if tied else None)
        deadline = time.monotonic() + start_timeout
        while not ready.exists():
            if self.process.poll() is not None or time.monotonic() > deadline:
                out = self.output()
                self.stop()
                raise LocalServerError(f"the embedded cricket server did not start "
                                       f"(exit status {self.process.returncode}):\n{out}")
            time.sleep(0.02)
        log.info("embedded cricket server %d on %s", self.process.pid, self.socket_path)

    @property
    def address(self) -> str:
        return self.socket_path

    def output(self) -> str:
        try:
            return self._log_path.read_text(errors="replace")
        except OSError:
            return ""

    def stop(self, timeout: float = 10.0) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()
        self._dir.cleanup()

    def __enter__(self) -> LocalServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
