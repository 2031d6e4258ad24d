"""The hand-written hot paths take their wire layouts from cricket.x through rpcgen: an edit to
cricket.x that changes a layout they use fails their build (Cython) or their call (the pure twin),
never silently writes the old bytes."""
from __future__ import annotations

import importlib
import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import cricket.protocol
from rpcgen.cli import compile_file

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "cricket" / "protocol" / "cricket.x"
HOT_PATH = ROOT / "cext" / "hostmem.pyx"


def _protocol(tmp_path: Path, edit: bool) -> Path:
    """A package tree ``tmp_path/cricket/protocol`` generated from cricket.x, with a field added
    to cr_launch_args when ``edit``."""
    text = SOURCE.read_text()
    if edit:
        edited = text.replace("unsigned shared_mem;", "unsigned shared_mem;\n    unsigned cluster_x;")
        assert edited != text
        text = edited
    pkg = tmp_path / "cricket" / "protocol"
    pkg.mkdir(parents=True)
    for d in (pkg.parent, pkg):
        (d / "__init__.py").write_text("")
    (pkg / "cricket.x").write_text(text)
    compile_file(str(pkg / "cricket.x"), str(pkg), cython=True)
    return tmp_path


def _cythonize(tmp_path: Path, include_first: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cython", "-3", "-I", str(include_first),
                           "-I", str(ROOT / "cext"), str(HOT_PATH), "-o", str(tmp_path / "hostmem.c")],
                          capture_output=True, text=True, timeout=300)


@pytest.mark.skipif(shutil.which("cython") is None and importlib.util.find_spec("Cython") is None,
                    reason="Cython is not installed")
@pytest.mark.parametrize("edit", [False, True], ids=["as-is", "edited"])
def test_the_launch_record_builder_compiles_only_against_the_layout_it_was_written_for(tmp_path, edit):
    result = _cythonize(tmp_path, _protocol(tmp_path, edit))
    if not edit:
        assert result.returncode == 0, result.stderr
    else:
        assert result.returncode != 0
        assert "put_cr_launch_args_fixed" in result.stdout + result.stderr


def test_the_pure_launch_record_builder_fails_against_an_edited_layout(tmp_path, monkeypatch):
    from cricket.client import hostmem         # the pure-Python twin
    _protocol(tmp_path, edit=True)
    package = tmp_path / "edited"
    shutil.copytree(tmp_path / "cricket" / "protocol", package)
    monkeypatch.syspath_prepend(str(tmp_path))
    edited = importlib.import_module("edited.cricket")
    monkeypatch.setattr(cricket.protocol, "gen", edited)
    with pytest.raises(TypeError, match="cluster_x"):
        hostmem.launch_record(7, (1, 1, 1), (1, 1, 1), 0, 0, 0, (), 0)
