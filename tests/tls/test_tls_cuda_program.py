"""An nvcc-built CUDA program through `cricket run --server 127.0.0.1:PORT`: over mutual TLS it
prints the same as over plain TCP, and the server saw it arrive inside TLS."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from tls_support import REPO, clean_env, tls_args, tls_env

pytestmark = pytest.mark.nvcc


@pytest.fixture(scope="module")
def reduction(tmp_path_factory):
    if not shutil.which("nvcc"):
        pytest.skip("nvcc (CUDA 13) not found on PATH")
    exe = tmp_path_factory.mktemp("reduction") / "reduction"
    r = subprocess.run(["nvcc", "-cudart", "shared", "-o", str(exe), str(REPO / "examples" / "reduction.cu")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return exe


def _run(program, server, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cricket", "run", "--server", server.address, "--",
                           str(program)], capture_output=True, text=True, timeout=300, cwd=REPO,
                          env={**clean_env(), "PYTHONPATH": str(REPO), **env})


def test_cuda_program_prints_the_same_over_tls_as_over_plain_tcp(start_server, certs, reduction):
    plain_server = start_server("--token", "t0ken")
    tls_server = start_server("--token", "t0ken", *tls_args(certs, required=True, mutual=True))
    plain = _run(reduction, plain_server, {"CRICKET_TOKEN": "t0ken"})
    assert plain.returncode == 0, plain.stderr
    assert plain.stdout.strip()
    over_tls = _run(reduction, tls_server, {"CRICKET_TOKEN": "t0ken", **tls_env(certs)})
    assert over_tls.returncode == 0, over_tls.stderr
    assert over_tls.stdout == plain.stdout
    assert "TLS TLSv1.3" in tls_server.output()
    assert "client certificate O=cricket,CN=cricket-client" in tls_server.output()
    # and without the TLS settings the same program is refused by that server
    refused = _run(reduction, tls_server, {"CRICKET_TOKEN": "t0ken"})
    assert refused.returncode != 0
