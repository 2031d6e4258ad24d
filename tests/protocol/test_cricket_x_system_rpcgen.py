"""cricket.x stays acceptable to the system rpcgen, and the C it generates compiles with libtirpc."""
import shutil
import subprocess
from pathlib import Path

import pytest

X = Path(__file__).resolve().parents[2] / "cricket" / "protocol" / "cricket.x"


@pytest.mark.cc
def test_system_rpcgen_generates_c_that_compiles(tmp_path):
    shutil.copy(X, tmp_path / "cricket.x")
    r = subprocess.run(["rpcgen", "cricket.x"], cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    for name in ("cricket.h", "cricket_xdr.c", "cricket_clnt.c", "cricket_svc.c"):
        assert (tmp_path / name).stat().st_size > 0
    cflags = subprocess.run(["pkg-config", "--cflags", "libtirpc"], capture_output=True, text=True).stdout.split()
    r = subprocess.run(["gcc", "-c", *cflags, "cricket_xdr.c", "cricket_clnt.c"], cwd=tmp_path,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    header = (tmp_path / "cricket.h").read_text()
    assert "#define CR_HELLO 1" in header and "cr_hello_1" in header
