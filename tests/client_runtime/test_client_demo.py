"""`make demo`: the CUDA program through cricket run, and its fallback without nvcc."""
from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from client_runtime_support import ROOT


def _demo():
    spec = importlib.util.spec_from_file_location("cricket_demo", ROOT / "examples" / "demo.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_without_nvcc_the_shipped_ptx_runs_through_the_python_api(capsys):
    assert _demo().run_ptx("nvcc is missing in this test") == 0
    out = capsys.readouterr().out
    assert "nvcc is missing in this test" in out and "PASS: vector add of 10000 elements" in out


@pytest.mark.nvcc
def test_demo_runs_vector_add_through_cricket_run(examples):
    res = subprocess.run([sys.executable, str(ROOT / "examples" / "demo.py")], capture_output=True,
                         text=True, timeout=300, cwd=ROOT)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "PASS: vector add of 10000 elements, 0 wrong" in res.stdout
    assert "1 kernel launch(es)" in res.stderr and "exited with status 0 after" in res.stderr
