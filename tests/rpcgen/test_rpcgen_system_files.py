"""Every .x that Debian's rpcsvc-proto and libtirpc-dev install, and the system rpcgen
accepts, passes --check, generates a module, and that module imports and works."""
from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys

import pytest

from rpcgen import load
from rpcgen.cli import compile_file


def _system_x_files() -> list[str]:
    if not shutil.which("dpkg"):
        return []
    res = subprocess.run(["dpkg", "-L", "rpcsvc-proto", "libtirpc-dev"], capture_output=True,
                         text=True)
    return sorted(line for line in res.stdout.splitlines() if line.endswith(".x"))


def _rpcgen_accepts(path: str, tmp_path) -> bool:
    out = tmp_path / "probe.c"
    return subprocess.run(["rpcgen", "-c", "-o", str(out), path], capture_output=True).returncode == 0


X_FILES = _system_x_files()


def test_system_x_files_are_installed():
    if not X_FILES:
        pytest.skip("dpkg or the rpcsvc-proto/libtirpc-dev packages are not available")
    assert len(X_FILES) >= 10


@pytest.mark.parametrize("path", X_FILES, ids=lambda p: p.rsplit("/", 1)[-1])
def test_system_x_file_checks_generates_and_imports(path, tmp_path):
    if shutil.which("rpcgen") and not _rpcgen_accepts(path, tmp_path):
        pytest.skip(f"the system rpcgen rejects {path}")
    res = subprocess.run([sys.executable, "-m", "rpcgen", path, "--check"], capture_output=True,
                         text=True)
    assert res.returncode == 0, res.stderr
    files = compile_file(path, str(tmp_path))
    spec = importlib.util.spec_from_file_location(f"sysx_{tmp_path.name}", files["python"])
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    model = load(path)
    for prog in model.programs:
        for vers in prog.versions:
            server = getattr(mod, f"{vers.name}_Server")
            assert server.PROGRAM == prog.number and server.VERSION == vers.number
            assert sorted(server.procedures) == sorted(p.number for p in vers.procedures)
            assert hasattr(mod, f"{vers.name}_Client") and hasattr(mod, f"{vers.name}_AsyncClient")
    for name in model.types:
        assert callable(getattr(mod, f"pack_{name}"))
        assert callable(getattr(mod, f"unpack_{name}"))


@pytest.mark.parametrize("path", X_FILES, ids=lambda p: p.rsplit("/", 1)[-1])
def test_builtin_cpp_reads_system_files_like_the_system_cpp(path):
    if not shutil.which("cpp"):
        pytest.skip("no system cpp to compare with")
    a, b = load(path, use_system_cpp=True), load(path, use_system_cpp=False)
    assert list(a.types) == list(b.types)
    assert [(c.name, c.value) for c in a.consts] == [(c.name, c.value) for c in b.consts]


def test_nfs_readdir_list_and_from_keyword(tmp_path):
    path = "/usr/include/rpcsvc/nfs_prot.x"
    if path not in X_FILES:
        pytest.skip("nfs_prot.x not installed")
    files = compile_file(path, str(tmp_path))
    spec = importlib.util.spec_from_file_location("nfs_prot_gen", files["python"])
    nfs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(nfs)
    args = nfs.renameargs(from_=nfs.diropargs(dir=nfs.nfs_fh(data=b"\1" * 32), name="a"),
                          to=nfs.diropargs(dir=nfs.nfs_fh(data=b"\2" * 32), name="b"))
    assert nfs.unpack_renameargs(nfs.pack_renameargs(args)) == args
    entries = None
    for i in range(5000):
        entries = nfs.entry(fileid=i, name=f"f{i}", cookie=i.to_bytes(4, "big"),
                            nextentry=entries)
    res = nfs.readdirres(nfs.NFS_OK, reply=nfs.dirlist(entries=entries, eof=True))
    assert nfs.unpack_readdirres(nfs.pack_readdirres(res)) == res
