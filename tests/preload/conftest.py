"""Fixtures for the libcudart shim: the shim built once, the nvcc test programs built once, and the
environment that makes a process load the shim and find the cricket client."""
from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = Path(__file__).resolve().parent / "programs"


def _load_build_module():
    spec = importlib.util.spec_from_file_location("cricket_preload_build", ROOT / "cext" / "preload" / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


shim_build = _load_build_module()
gen_stubs = shim_build.gen_stubs

CUDA_HOME = Path(os.environ.get("CUDA_HOME", "/usr/local/cuda"))
REAL_LIBCUDART = CUDA_HOME / "lib64" / "libcudart.so.13"


def libpython_path() -> str | None:
    if not sysconfig.get_config_var("Py_ENABLE_SHARED"):
        return None
    return str(Path(sysconfig.get_config_var("LIBDIR")) / sysconfig.get_config_var("INSTSONAME"))


@pytest.fixture(scope="session")
def fresh_shim(run_once) -> Path:
    """The shim built from the sources into a folder of its own (with its generated sources in
    ``gen/`` beside it), apart from the package's copy that tests/conftest.py's ``shim`` keeps;
    built once per run."""
    if not (CUDA_HOME / "include" / "cuda_runtime_api.h").exists():
        pytest.skip(f"CUDA 13 headers not found under {CUDA_HOME}/include")
    if not shutil.which(os.environ.get("CC", "cc")):
        pytest.skip("no C compiler (cc) to build the shim")
    folder = run_once("cext/preload", lambda out: shim_build.build(out, CUDA_HOME / "include"))
    return folder / shim_build.SHIM_NAME


@pytest.fixture(scope="session")
def real_libcudart() -> Path:
    if not REAL_LIBCUDART.exists():
        pytest.skip(f"NVIDIA's {REAL_LIBCUDART} is not installed")
    return REAL_LIBCUDART


class Programs:
    """Test programs compiled by nvcc (-cudart shared), each at most once per session."""

    def __init__(self, outdir: Path) -> None:
        self.outdir = outdir
        self._built: dict[str, Path] = {}

    def get(self, source: str, shared: bool = False) -> Path:
        if source not in self._built:
            if not shutil.which("nvcc"):
                pytest.skip("nvcc (CUDA 13) not found on PATH")
            stem = Path(source).stem
            out = self.outdir / (f"lib{stem}.so" if shared else stem)
            cmd = ["nvcc", "-cudart", "shared", "-o", str(out), str(PROGRAMS / source)]
            if shared:
                cmd[1:1] = ["-shared", "-Xcompiler", "-fPIC"]
            subprocess.run(cmd, check=True, capture_output=True, timeout=300)
            self._built[source] = out
        return self._built[source]


@pytest.fixture(scope="session")
def programs(tmp_path_factory) -> Programs:
    return Programs(tmp_path_factory.mktemp("programs"))


@pytest.fixture
def shim_env(fresh_shim) -> dict[str, str]:
    """Environment for a process with the shim preloaded, as `cricket run` will set it."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("CRICKET_") and k not in ("LD_PRELOAD", "PYTHONHOME", "LD_BIND_NOW")}
    env["LD_PRELOAD"] = str(fresh_shim)
    env["CRICKET_PYTHON"] = sys.executable
    env["CRICKET_PYTHONPATH"] = str(ROOT)
    # No server: these tests are about the shim; calls that need one fail with a clear error.
    env["CRICKET_SERVER"] = "/nonexistent/cricket-test.sock"
    lib = libpython_path()
    if lib:
        env["CRICKET_LIBPYTHON"] = lib
    return env


@pytest.fixture
def needs_libpython() -> str:
    lib = libpython_path()
    if lib is None:
        pytest.skip("this Python has no shared libpython, so a native program cannot embed it")
    return lib


@pytest.fixture(scope="session")
def run():
    """run(cmd, env, timeout=60) -> CompletedProcess with text stdout/stderr."""
    def run_command(cmd: list, env: dict[str, str], timeout: float = 60) -> subprocess.CompletedProcess:
        return subprocess.run([str(c) for c in cmd], env=env, capture_output=True, text=True,
                              timeout=timeout)
    return run_command


@pytest.fixture(scope="session")
def build_module():
    return shim_build
