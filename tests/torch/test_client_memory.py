"""`import torch` registers ~345 MB of fatbin containers; the client keeps views of them where the
libraries are mapped, not copies, so cricket adds at most 150 MB to the process (issue 17)."""
from __future__ import annotations

import subprocess

from .torch_support import run_under_cricket, torch_python

PROGRAM = r"""
import torch
torch.cuda.is_available()
print(next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM")))
"""


def test_import_torch_costs_at_most_150_mb_more_under_cricket():
    alone = subprocess.run([torch_python()[0], "-c", PROGRAM], capture_output=True, text=True, timeout=300)
    assert alone.returncode == 0, alone.stderr[-3000:]
    cricket = run_under_cricket("-c", PROGRAM)
    extra_kib = int(cricket.stdout.split()[-1]) - int(alone.stdout.split()[-1])
    assert extra_kib <= 150 * 1024, f"cricket added {extra_kib // 1024} MB"
