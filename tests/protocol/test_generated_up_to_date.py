"""The generated protocol module is never regenerated at import: a source checkout out of date
with its cricket.x says to run make build; an installed package imports what was built."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import pytest

from cricket._checkout import in_source_checkout
from cricket.protocol import stale_build

PACKAGE = Path(__file__).resolve().parents[2] / "cricket"
CODEC = "_cricket_xdr" + EXTENSION_SUFFIXES[0]


def _protocol_dir(tmp_path: Path, times: dict[str, float]) -> Path:
    """A folder with the protocol's files (contents do not matter here) at the given times."""
    for name in ("cricket.x", "cricket.py", "_cricket_xdr.pyx", CODEC):
        (tmp_path / name).write_text("")
    for name, when in times.items():
        os.utime(tmp_path / name, (when, when))
    return tmp_path


def test_up_to_date_files_are_not_stale(tmp_path):
    d = _protocol_dir(tmp_path, {"cricket.x": 1000, "cricket.py": 2000, "_cricket_xdr.pyx": 2000, CODEC: 3000})
    assert stale_build(d) is None


def test_generated_module_older_than_cricket_x_is_stale(tmp_path):
    d = _protocol_dir(tmp_path, {"cricket.x": 2000, "cricket.py": 1000})
    assert "cricket.py is older than" in stale_build(d)


def test_missing_generated_module_is_stale(tmp_path):
    d = _protocol_dir(tmp_path, {})
    (d / "cricket.py").unlink()
    assert "not generated yet" in stale_build(d)


def test_codec_built_before_its_cython_source_is_stale(tmp_path):
    d = _protocol_dir(tmp_path, {"cricket.x": 1000, "cricket.py": 2000, "_cricket_xdr.pyx": 3000, CODEC: 2500})
    assert f"{CODEC} was built from an older cricket.x" in stale_build(d)


@pytest.fixture
def package_copy(tmp_path: Path) -> Path:
    """This checkout's cricket package, built, copied alone into ``tmp_path``, its cricket.x
    newer than the module generated from it and the codec's Cython source newer than the codec."""
    shutil.copytree(PACKAGE, tmp_path / "cricket", ignore=shutil.ignore_patterns("__pycache__"), symlinks=True)
    protocol = tmp_path / "cricket" / "protocol"
    later = max(p.stat().st_mtime for p in protocol.iterdir()) + 60
    os.utime(protocol / "cricket.x", (later, later))
    os.utime(protocol / "_cricket_xdr.pyx", (later, later))
    return tmp_path


def _import_protocol(top: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CRICKET_")}
    env["PYTHONPATH"] = str(top)
    return subprocess.run([sys.executable, "-B", "-c", "import cricket.protocol as p; print(p.__file__)"],
                          capture_output=True, text=True, env=env, cwd=top, timeout=120)


def _files(top: Path) -> dict[str, int]:
    return {str(p.relative_to(top)): p.stat().st_mtime_ns for p in (top / "cricket" / "protocol").iterdir()}


def test_stale_checkout_says_make_build_and_writes_nothing(package_copy):
    (package_copy / "setup.py").write_text("")
    assert in_source_checkout(str(package_copy / "cricket" / "protocol"))
    before = _files(package_copy)
    r = _import_protocol(package_copy)
    assert r.returncode != 0
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: cricket protocol: cricket.py is older than") and "make build" in last
    assert _files(package_copy) == before


def test_installed_package_imports_what_was_built_whatever_the_times(package_copy):
    assert not in_source_checkout(str(package_copy / "cricket" / "protocol"))
    before = _files(package_copy)
    r = _import_protocol(package_copy)
    assert r.returncode == 0, r.stderr
    assert Path(r.stdout.strip()).parent == package_copy / "cricket" / "protocol"
    assert _files(package_copy) == before
