"""bench/fatbin.py runs end to end on a small library nvcc builds (the real run uses libcublasLt)."""
from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.mark.nvcc
@pytest.mark.slow
def test_bench_prints_a_markdown_table(nvcc_builds):
    r = subprocess.run([sys.executable, str(ROOT / "bench" / "fatbin.py"), "--library",
                        str(nvcc_builds.path("gencode")), "--arch", "90", "--repeat", "1"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("|")]
    assert lines[0] == "| what | ours | reference | ratio | goal |"
    assert len(lines) == 2 + 8
    assert any("first launch of one kernel (sm_90)" in ln for ln in lines)
