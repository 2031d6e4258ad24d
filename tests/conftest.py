"""Shared fixtures: real tools (nvcc, gcc, the system rpcgen) found once, skipped with a reason when
absent; nvcc builds shared by the whole run; a lock shared by the run's processes (pytest-xdist);
the libcudart shim and the libcuda.so.1 replacement built from the sources."""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

# Test files are imported with --import-mode=importlib (pyproject.toml): each under a name of its
# own, so files in different folders may share a name, and sys.path is left alone. The helper
# modules beside the tests (client_runtime_support.py, rpc_calc.py, plugin_backend.py, ...) are
# imported by their plain names, so every test folder that holds one is put on sys.path here.
for _folder in sorted(p for p in Path(__file__).parent.iterdir() if p.is_dir()):
    if any(not f.name.startswith(("test_", "conftest")) for f in _folder.glob("*.py")) \
            and str(_folder) not in sys.path:
        sys.path.append(str(_folder))

# The client applies CUDA_VISIBLE_DEVICES to the server's devices; a CI that hides GPUs with an empty
# value would hide cricket's emu device too.
os.environ.pop("CUDA_VISIBLE_DEVICES", None)

# A shell starts a background job with SIGINT and SIGQUIT ignored, `nohup` ignores SIGHUP, and an
# ignored signal stays ignored across exec: the programs the tests start would then ignore the
# Ctrl-C or hang-up the signal tests send, as no program at a terminal does. The test processes
# take the default disposition back (a handler is reset to the default in every program they start).
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
for _ignored in (signal.SIGQUIT, signal.SIGHUP):
    if signal.getsignal(_ignored) == signal.SIG_IGN:
        signal.signal(_ignored, signal.SIG_DFL)


def _has_libtirpc() -> bool:
    if not shutil.which("pkg-config"):
        return False
    return subprocess.run(["pkg-config", "--exists", "libtirpc"]).returncode == 0


HAVE_NVCC = shutil.which("nvcc") is not None
HAVE_CC = all(shutil.which(t) for t in ("gcc", "rpcgen")) and _has_libtirpc()


def pytest_collection_modifyitems(config, items):
    skip_nvcc = pytest.mark.skip(reason="nvcc (CUDA 13) not found on PATH")
    skip_cc = pytest.mark.skip(reason="gcc, the system rpcgen or libtirpc-dev (pkg-config libtirpc) missing")
    for item in items:
        if "nvcc" in item.keywords and not HAVE_NVCC:
            item.add_marker(skip_nvcc)
        if "cc" in item.keywords and not HAVE_CC:
            item.add_marker(skip_cc)
        if "gpu" in item.keywords:
            from cricket._gpu import gpu_unavailable_reason
            reason = gpu_unavailable_reason()
            if reason:
                item.add_marker(pytest.mark.skip(reason=reason))


def run_folder(tmp_path_factory) -> Path:
    """The folder every process of this run shares: pytest's base temporary folder, or, in a
    pytest-xdist worker (whose base folder is its own), the one above it."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@contextlib.contextmanager
def file_lock(path: Path):
    """Held by one process at a time (flock): the run's other processes wait."""
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@pytest.fixture(scope="session")
def run_lock(tmp_path_factory):
    """``with run_lock(name):`` one test process of the run at a time, for work on files outside
    pytest's temporary folders (the shim built into cricket/_preload, build/examples)."""
    folder = run_folder(tmp_path_factory) / "locks"
    folder.mkdir(exist_ok=True)
    threads = threading.Lock()

    @contextlib.contextmanager
    def hold(name: str):
        with threads, file_lock(folder / f"{name}.lock"):
            yield
    return hold


class RunOnce:
    """Builds shared by the whole run: ``run_once(name, build)`` calls ``build(folder)`` in an empty
    folder of its own the first time any process of the run (pytest-xdist workers too) asks for
    ``name``, and hands every later caller that folder. A build that raises leaves nothing behind:
    the next caller tries again."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._guard = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}

    def __call__(self, name: str, build) -> Path:
        key = hashlib.sha256(name.encode()).hexdigest()[:20]
        out_dir = self.folder / key
        done = out_dir / ".done"
        with self._guard:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock, file_lock(self.folder / f"{key}.lock"):
            if not done.exists():
                shutil.rmtree(out_dir, ignore_errors=True)
                out_dir.mkdir()
                try:
                    build(out_dir)
                except BaseException:
                    shutil.rmtree(out_dir, ignore_errors=True)
                    raise
                done.touch()
        return out_dir


@pytest.fixture(scope="session")
def run_once(tmp_path_factory) -> RunOnce:
    """``run_once(name, build)``: the folder ``build(folder)`` filled, once per run (see RunOnce)."""
    folder = run_folder(tmp_path_factory) / "once"
    folder.mkdir(exist_ok=True)
    return RunOnce(folder)


class NvccBuilds:
    """Each nvcc command (arguments and output name) run once per test run and its output shared by
    every test that asks for it; the run's processes (pytest-xdist workers) share the builds too."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._guard = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}

    def __call__(self, *args: str | os.PathLike, output: str) -> Path:
        """``nvcc ARGS -o FOLDER/OUTPUT`` unless built already; returns the output's path."""
        if not HAVE_NVCC:
            pytest.skip("nvcc (CUDA 13) not found on PATH")
        argv = [str(a) for a in args]
        key = hashlib.sha256("\0".join([output, *argv]).encode()).hexdigest()[:20]
        out_dir = self.folder / key
        out, done = out_dir / output, out_dir / ".done"
        with self._guard:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock, file_lock(self.folder / f"{key}.lock"):
            if not done.exists():
                out_dir.mkdir(exist_ok=True)
                cmd = ["nvcc", *argv, "-o", str(out)]
                r = subprocess.run(cmd, capture_output=True, text=True, cwd=out_dir, timeout=600)
                if r.returncode != 0:
                    raise AssertionError(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stderr}")
                done.touch()
        return out


@pytest.fixture(scope="session")
def nvcc_build(tmp_path_factory) -> NvccBuilds:
    """``nvcc_build(*nvcc_args, output="name")``: the path of that build, compiled at most once per
    run (skips the test where nvcc is missing)."""
    folder = run_folder(tmp_path_factory) / "nvcc"
    folder.mkdir(exist_ok=True)
    return NvccBuilds(folder)


CUDA_INCLUDE = Path(os.environ.get("CUDA_HOME", "/usr/local/cuda")) / "include"
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def shim(run_lock) -> Path:
    """The libcudart shim at the place ``cricket run`` preloads it from (cricket/_preload), rebuilt
    from the sources when they changed, by one test process of the run at a time."""
    if not (CUDA_INCLUDE / "cuda_runtime_api.h").exists() or not shutil.which(os.environ.get("CC", "cc")):
        pytest.skip("the libcudart shim needs the CUDA 13 headers and cc")
    target = ROOT / "cricket" / "_preload"
    with run_lock("preload-shim"):
        subprocess.run([sys.executable, str(ROOT / "cext" / "preload" / "build.py"), str(target),
                        "--gen-dir", str(ROOT / "build" / "preload")], check=True, capture_output=True)
    return target / "libcricket-cudart.so"


@pytest.fixture(scope="session")
def driver_dir(run_once) -> Path:
    """A folder holding the libcuda.so.1 replacement built from cext/driver: libcricket-cuda.so and
    the link libcuda.so.1 to it (put it on LD_LIBRARY_PATH); built once per run."""
    if not shutil.which(os.environ.get("CC", "cc")) or not (CUDA_INCLUDE / "cudaTypedefs.h").exists():
        pytest.skip(f"cext/driver needs a C compiler (cc) and the CUDA 13 headers in {CUDA_INCLUDE}")
    # Loaded under a name of its own: cext/preload has a build.py too.
    spec = importlib.util.spec_from_file_location("cricket_driver_build", ROOT / "cext" / "driver" / "build.py")
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    return run_once("cext/driver", lambda out: build.build(out, CUDA_INCLUDE))


@pytest.fixture(scope="session")
def vadd_ptx(nvcc_build) -> Path:
    """PTX of tests/driver/programs/vadd_kernel.cu (nvcc, once per run), for the cuda-python programs
    that launch it."""
    return nvcc_build("-ptx", "-arch=sm_75", ROOT / "tests" / "driver" / "programs" / "vadd_kernel.cu",
                      output="vadd.ptx")


def _listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


@pytest.fixture(scope="module")
def rpcbind():
    """The rpcbind of this host on port 111: the one running ("already running"), or one started
    for the test module ("started"; needs root and Debian's ``rpcbind`` package) and stopped
    after it. Skips, with the reason, where neither is possible."""
    if _listening(111):
        yield "already running"
        return
    binary = shutil.which("rpcbind") or ("/sbin/rpcbind" if os.path.exists("/sbin/rpcbind") else None)
    if binary is None:
        pytest.skip("no rpcbind on this host (apt-get install rpcbind)")
    if os.geteuid() != 0:
        pytest.skip("starting rpcbind needs root (it binds port 111)")
    os.makedirs("/run/rpcbind", exist_ok=True)
    proc = subprocess.Popen([binary, "-f"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 10
    while not _listening(111):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.skip(f"rpcbind could not be started here: {proc.stderr.read().decode()[:200]}")
        time.sleep(0.05)
    yield "started"
    proc.terminate()
    proc.wait(10)
