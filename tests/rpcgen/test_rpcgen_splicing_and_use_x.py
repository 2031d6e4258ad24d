"""A ``%`` line continued by a backslash (cpp's line splicing) and a .x that uses another .x's types
(``--use-x``), with the system's rpcsvc/nis.x and nis_callback.x, through the real command."""
from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rpcgen import load

RPCSVC = Path("/usr/include/rpcsvc")
NIS, NIS_CALLBACK = RPCSVC / "nis.x", RPCSVC / "nis_callback.x"
CPPS = [pytest.param(False, id="builtin-cpp"),
        pytest.param(None, id="system-cpp", marks=pytest.mark.skipif(
            shutil.which("cpp") is None, reason="no system cpp"))]

SPLICED = """\
%#define RIGHTS ((1 +\\
%\t\t 2) << 16)
const AFTER = 3;
struct s { int x; };
"""


def _rpcgen(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rpcgen", *map(str, args)], capture_output=True,
                          text=True, timeout=120)


def _import(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("use_system_cpp", CPPS)
def test_a_percent_line_continued_by_a_backslash_is_one_passthrough(tmp_path, use_system_cpp):
    x = tmp_path / "spliced.x"
    x.write_text(SPLICED + "struct bad { nosuch y; };\n")
    with pytest.raises(Exception) as info:            # line numbers still those of the file
        load(str(x), use_system_cpp=use_system_cpp)
    assert f"{x}:5:" in str(info.value)
    x.write_text(SPLICED)
    mod = load(str(x), use_system_cpp=use_system_cpp)
    assert [c.name for c in mod.consts] == ["AFTER"] and list(mod.types) == ["s"]


@pytest.mark.skipif(not NIS.exists(), reason="rpcsvc/nis.x is not installed")
@pytest.mark.parametrize("use_system_cpp", CPPS)
def test_nis_x_with_its_multi_line_define_checks(use_system_cpp):
    mod = load(str(NIS), use_system_cpp=use_system_cpp)
    assert "nis_object" in mod.types and mod.programs


@pytest.mark.skipif(not NIS_CALLBACK.exists(), reason="rpcsvc/nis_callback.x is not installed")
def test_nis_callback_x_needs_nis_x_and_compiles_with_use_x(tmp_path):
    alone = _rpcgen(NIS_CALLBACK, "--check")
    assert alone.returncode == 1 and "undefined type 'nis_object'" in alone.stderr
    assert "Traceback" not in alone.stderr
    res = _rpcgen(NIS_CALLBACK, "-o", tmp_path, "--use-x", NIS)
    assert res.returncode == 0, res.stderr
    gen = _import(res.stdout.split()[0], "nis_callback_gen")
    assert gen.CB_VERS_Server.PROGRAM == 100302 and 1 in gen.CB_VERS_Server.procedures
    data = gen.cback_data(entries=[None])
    assert gen.unpack_cback_data(gen.pack_cback_data(data)).entries == [None]
    assert "NIS_PROG" in {p.name for p in load(str(NIS)).programs}
    assert not hasattr(gen, "NIS_VERSION_Server")        # used files bring types, not programs
