"""cricket installed from its wheel: it runs CUDA programs and never writes into its own package.

The wheel is built from this checkout (``pip wheel --no-build-isolation``: after ``make build``
it compiles only the shims again) and installed into a fresh virtual environment whose
``cricket`` folder is then made read-only. Its dependencies come from the environment running
the tests (a path in a ``.pth`` file; cricket itself is not taken from there: the venv's own
site-packages comes first). Every installed source is first made newer than what was built from
it (``cricket.x`` than ``cricket.py``, each ``.py`` and ``.pyx`` than its extension), as an
installer that sets file times may leave them: an installed package never compares them.
Everything runs from a folder outside the checkout, with no PYTHONPATH.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import site
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from cricket.client.run_cli import libpython

ROOT = Path(__file__).resolve().parents[1]

# After make build the wheel compiles only the shims (seconds); without build/lib, everything.
pytestmark = pytest.mark.timeout(900)

_spec = importlib.util.spec_from_file_location("cricket_wheel_examples_build", ROOT / "examples" / "build.py")
examples_build = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = examples_build          # dataclasses look their module up
_spec.loader.exec_module(examples_build)


@dataclass
class Installed:
    venv: Path
    package: Path                      # site-packages/cricket of the venv
    outside: Path                      # a working folder outside the checkout
    files: dict[str, tuple[int, int, str]]   # the package as installed: path -> (mode, mtime, sha256)

    def run(self, *args: str, timeout: float = 180) -> subprocess.CompletedProcess:
        return subprocess.run(list(args), capture_output=True, text=True, timeout=timeout, env=outside_env(),
                              cwd=self.outside)


def outside_env() -> dict[str, str]:
    """The test run's environment without what leads back to the checkout (PYTHONPATH: pip would
    take the checkout's egg-info for an installed cricket) or to a server of the test run."""
    return {k: v for k, v in os.environ.items()
            if not k.startswith(("CRICKET_", "CUDA_VISIBLE")) and k not in ("PYTHONPATH", "PYTHONHOME", "LD_PRELOAD")}


def snapshot(package: Path) -> dict[str, tuple[int, int, str]]:
    """Every file and folder under ``package``: its mode, time and content."""
    files = {}
    for path in sorted(package.rglob("*")):
        st = path.lstat()
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() and not path.is_symlink() else ""
        files[str(path.relative_to(package))] = (st.st_mode, st.st_mtime_ns, digest)
    return files


def changed(installed: Installed) -> list[str]:
    now = snapshot(installed.package)
    return sorted(name for name in set(now) | set(installed.files) if now.get(name) != installed.files.get(name))


def _dependency_paths() -> list[str]:
    """The site-packages folders of the running environment (cricket's dependencies are there)."""
    paths = [*site.getsitepackages(), *([site.getusersitepackages()] if site.ENABLE_USER_SITE else [])]
    return [p for p in dict.fromkeys(paths) if os.path.isdir(p)]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    top = tmp_path_factory.mktemp("wheel")
    dist = top / "dist"
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                            "-w", str(dist), "."], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert build.returncode == 0, build.stdout + build.stderr
    (wheel,) = dist.glob("cricket-*.whl")
    venv = top / "venv"
    outside = top / "work"
    outside.mkdir()
    # No pip of its own (ensurepip costs about 4 s of CPU): the running environment's pip installs
    # into it (--python).
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, capture_output=True,
                   timeout=300, env=outside_env(), cwd=outside)
    python = venv / "bin" / "python"
    install = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
                              "--no-index", str(wheel)],
                             capture_output=True, text=True, timeout=300, env=outside_env(), cwd=outside)
    assert install.returncode == 0, install.stdout + install.stderr
    purelib = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                  check=True, capture_output=True, text=True, env=outside_env(),
                                  cwd=outside).stdout.strip())
    (purelib / "zz-cricket-test-dependencies.pth").write_text("\n".join(_dependency_paths()) + "\n")
    package = purelib / "cricket"
    # Times an installer may leave: every source newer than what was built from it (cricket.x
    # than cricket.py, each .py and .pyx than its extension), with the bytecode compiled after.
    later = max(p.stat().st_mtime for p in package.rglob("*")) + 3600
    for source in package.rglob("*"):
        if source.suffix in (".py", ".pyx", ".x"):
            when = later + 1 if source.suffix == ".x" else later
            os.utime(source, (when, when))
    subprocess.run([str(python), "-m", "compileall", "-q", str(package)], check=True, env=outside_env(), cwd=outside)
    subprocess.run(["chmod", "-R", "a-w", str(package)], check=True)
    try:
        yield Installed(venv, package, outside, snapshot(package))
    finally:
        subprocess.run(["chmod", "-R", "u+w", str(package)], check=True)


def test_installed_package_is_imported_from_site_packages(installed: Installed):
    r = installed.run(str(installed.venv / "bin" / "python"), "-c",
                      "import cricket, cricket.protocol, cricket.client.runtime as r; "
                      "print(cricket.__file__); print(r.launch_queue.__name__)")
    assert r.returncode == 0, r.stderr
    where, launch_queue = r.stdout.splitlines()
    assert Path(where).parent == installed.package
    assert launch_queue == "cricket._cext.launch_queue"   # as built, whatever the file times say
    assert changed(installed) == []


@pytest.mark.nvcc
@pytest.mark.parametrize("cudart", ["shared", "static"])
def test_vector_add_passes_through_installed_cricket_run(installed: Installed, cudart: str):
    if not shutil.which("nvcc"):
        pytest.skip("nvcc (CUDA 13) not found on PATH")
    if not libpython():
        pytest.skip("this Python has no shared libpython for a native program to embed")
    programs = examples_build.build(["vector_add"], installed.outside / cudart, jobs=1, cudart=cudart)
    r = installed.run(str(installed.venv / "bin" / "cricket"), "run", "--backend", "emu", "--",
                      str(programs["vector_add"]))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "PASS" in r.stdout
    assert changed(installed) == []
