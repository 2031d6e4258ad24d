"""What the tests of tests/driver share besides fixtures (test modules import this module, never
each other or the conftest): paths, the build scripts of cext/driver and examples/ loaded under
names of their own, a runner for probes of the driver library in a fresh Python, the environment
of a program run on the libcuda.so.1 replacement, and `cricket run` of a program on a server."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from cricket.client.run_cli import libpython

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
EXAMPLES = ROOT / "examples"
PROGRAMS = HERE / "programs"
DRIVER_SRC = ROOT / "cext" / "driver"
CUDA_INCLUDE = Path(os.environ.get("CUDA_HOME", "/usr/local/cuda")) / "include"


def _load(path: Path, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module          # dataclasses look their module up while a class is made
    spec.loader.exec_module(module)
    return module


# Under names of their own: other test folders load build scripts of the same file name.
driver_build = _load(DRIVER_SRC / "build.py", "cricket_driver_build")
examples_build = _load(EXAMPLES / "build.py", "cricket_driver_examples_build")


def run_probe(driver_lib: Path, body: str, env: dict[str, str] | None = None) -> dict:
    """Runs `body` in a fresh Python with `lib` = the driver library (ctypes, by path) and the
    helpers of probe.py; the body sets `result`, which comes back as a dict. (Loading a library
    whose SONAME is libcuda.so.1 into the test process would shadow a real driver for later tests.)"""
    script = "import json, sys\nsys.path.insert(0, %r)\nfrom probe import *\nlib = load(%r)\nresult = {}\n%s\nprint(json.dumps(result))\n" % (
        str(HERE), str(driver_lib), textwrap.dedent(body))
    full_env = {**os.environ, **(env or {})}
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=full_env, timeout=60)
    if proc.returncode != 0:
        raise AssertionError(f"probe failed with {proc.returncode}:\n{proc.stderr}")
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    data["_stderr"] = proc.stderr
    return data


def environment(driver_dir: Path, server: Any, **extra: str) -> dict[str, str]:
    """The environment of a program run on the libcuda.so.1 in ``driver_dir`` against ``server``
    (a LocalServer): the library first on LD_LIBRARY_PATH, the client found through
    CRICKET_LIBPYTHON (native programs) or the running interpreter (Python programs)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CRICKET_", "CUDA_PYTHON_")) and k not in ("LD_PRELOAD", "PYTHONHOME")}
    env.update(LD_LIBRARY_PATH=str(driver_dir), CRICKET_SERVER=server.address,
               CRICKET_PYTHON=sys.executable, CRICKET_PYTHONPATH=str(ROOT),
               PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p))
    lib = libpython()
    if lib:
        env["CRICKET_LIBPYTHON"] = lib
    env.update(extra)
    return env


def cricket_run(args: list[str], server: Any, **env: str) -> subprocess.CompletedProcess:
    """``cricket run --server SERVER -- ARGS`` (emu backend), its output captured."""
    full = {k: v for k, v in os.environ.items() if not k.startswith(("CRICKET_", "CUDA_VISIBLE"))}
    full.update(env)
    return subprocess.run([sys.executable, "-m", "cricket", "run", "--server", server.address, "--backend", "emu",
                           "--", *args], capture_output=True, text=True, timeout=180, env=full, cwd=ROOT)
