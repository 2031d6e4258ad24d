"""``python -m rpcgen``: --check, -o DIR, --cython, and errors on stderr."""
from __future__ import annotations

import subprocess
import sys

from rpcgen_testlib import DATA


def rpcgen(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "rpcgen", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd)


def test_check_validates_without_writing(tmp_path):
    x = tmp_path / "ok.x"
    x.write_text("struct p { int x; };\n")
    r = rpcgen(x, "--check")
    assert r.returncode == 0 and "ok" in r.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ok.x"]


def test_output_dir_gets_module_and_optional_pyx_and_layouts(tmp_path):
    r = rpcgen(DATA / "everything.x", "-o", tmp_path / "out", "--cython")
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "_everything_layout.pxd", "_everything_xdr.pyx", "everything.py"]
    text = (tmp_path / "out" / "everything.py").read_text()
    compile(text, "everything.py", "exec")
    assert "rpc.call(prog, vers, proc, buffers)" in text  # the documented contract


def test_errors_go_to_stderr_with_location_and_exit_1(tmp_path):
    x = tmp_path / "bad.x"
    x.write_text("struct p {\n  nosuch x;\n};\n")
    r = rpcgen(x, "--check")
    assert r.returncode == 1
    assert f"{x}:2:3: undefined type 'nosuch'" in r.stderr


def test_defines_from_the_command_line(tmp_path):
    x = tmp_path / "d.x"
    x.write_text("#ifdef WANT\nconst A = 1;\n#else\nnot valid;\n#endif\n")
    assert rpcgen(x, "--check").returncode == 1
    assert rpcgen(x, "--check", "-DWANT").returncode == 0
    assert rpcgen(x, "--check", "-DWANT", "--builtin-cpp").returncode == 0


def test_rpcgen_never_imports_cricket(tmp_path):
    code = ("import sys, rpcgen, rpcgen.cli, rpcgen.emit_python, rpcgen.emit_cython, rpcgen.build;"
            f"rpcgen.cli.compile_file({str(DATA / 'everything.x')!r}, {str(tmp_path)!r}, cython=True);"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'cricket'))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"
