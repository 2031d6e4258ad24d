"""The runtime face's launch of a kernel built as SASS only (``-gencode arch=compute_75,code=sm_75``,
no PTX) on emu: ``<<<>>>`` itself fails with cudaErrorNoKernelImageForDevice (not a later
synchronisation), one log line names the kernel, the file and the way out, and the process goes
on. An nvcc program run by ``cricket run`` against a real emu server; torch's libraries take the
same path (tests/torch)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cricket.client.run_cli import libpython

ROOT = Path(__file__).resolve().parents[2]
SOURCE = Path(__file__).resolve().parent / "programs" / "sass_only_launch.cu"


@pytest.mark.nvcc
def test_sass_only_kernel_fails_at_its_launch_and_the_log_says_why(tmp_path):
    if not shutil.which("nvcc"):
        pytest.skip("nvcc (CUDA 13) not found on PATH")
    if not libpython():
        pytest.skip("this Python has no shared libpython for a native program to embed")
    program = tmp_path / "sass_only_launch"
    subprocess.run(["nvcc", "-cudart", "shared", "-gencode", "arch=compute_75,code=sm_75", "-o", str(program),
                    str(SOURCE)], check=True, capture_output=True, timeout=300)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CRICKET_") and k != "LD_PRELOAD"}
    env["PYTHONPATH"] = str(ROOT)
    proc = subprocess.run([sys.executable, "-m", "cricket", "run", "--backend", "emu", "--", str(program)],
                          capture_output=True, text=True, env=env, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines() == ["launch: cudaErrorNoKernelImageForDevice", "sync: cudaSuccess",
                                        "copy: cudaSuccess"]
    report = [line for line in proc.stderr.splitlines() if "cudaErrorNoKernelImageForDevice" in line]
    assert len(report) == 1, proc.stderr
    assert (f"kernel _Z5scalePff: {program} ships no PTX for this kernel (only SASS for sm_75), and the emu "
            "backend executes PTX only") in report[0]
