"""What the torch tests share besides fixtures (they import this module, never the conftest): the
Python that imports torch, and a runner of it under `cricket run`."""
from __future__ import annotations

import functools
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@functools.cache
def torch_python() -> tuple[str, str | None]:
    """(interpreter, why it cannot be used or None)."""
    python = os.environ.get("CRICKET_TORCH_PYTHON") or sys.executable
    probe = subprocess.run([python, "-c", "import torch; print(torch.version.cuda)"],
                           capture_output=True, text=True, timeout=300)
    if probe.returncode != 0:
        return python, (f"torch is not importable by {python} (set CRICKET_TORCH_PYTHON, or run "
                        f"`make test-torch`)")
    if not probe.stdout.strip():
        return python, f"the torch of {python} is a CPU-only build"
    return python, None


def run_under_cricket(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """``cricket run --backend emu -- TORCH_PYTHON ARGS`` from this checkout; it must succeed."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("CRICKET_SERVER")}
    environment["PYTHONPATH"] = os.pathsep.join([str(ROOT), environment.get("PYTHONPATH", "")])
    environment.update(env or {})
    proc = subprocess.run([sys.executable, "-m", "cricket", "run", "--backend", "emu", "--",
                           torch_python()[0], *args], capture_output=True, text=True,
                          env=environment, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc
