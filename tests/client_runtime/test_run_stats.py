"""`cricket run --stats`: every figure says what it is, and the server's side is there too
(kernel time, calls by function); a local server's log stays quiet at its default level."""
from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from client_runtime_support import ROOT


@pytest.mark.nvcc
def test_stats_label_every_figure_and_add_kernel_time_and_calls(examples):
    env = {k: v for k, v in os.environ.items() if k not in ("CRICKET_SERVER", "CRICKET_LOG")}
    res = subprocess.run([sys.executable, "-m", "cricket", "run", "--backend", "emu", "--stats", "--",
                          str(examples["vector_add"])], capture_output=True, text=True, timeout=120,
                         cwd=ROOT, env=env)
    assert res.returncode == 0, res.stdout + res.stderr
    err = res.stderr
    assert re.search(r"on a local server \(server pid \d+\)", err), err
    assert re.search(r"exited with status 0 after \d+\.\d{3} s wall", err), err
    assert re.search(r"on emu via cricket \S+ at \S+, \d+\.\d{3} s wall, 0 stream\(s\) open", err), err
    kernels = re.search(r"server session \d+: (\d+\.\d{3}) s kernel time in (\d+) kernel\(s\); "
                        r"calls by function: (.*)", err)
    assert kernels, err
    assert float(kernels.group(1)) > 0 and kernels.group(2) == "1"
    calls = dict(item.rsplit(" ", 1) for item in kernels.group(3).split(", "))
    assert calls["launch"] == "1" and calls["hello"] == "1"
    assert int(calls["memcpy_htod"]) >= 1 and int(calls["mem_alloc"]) == 3
    # the local server's info lines (sessions opening and closing) are not the program's business
    assert "HELLO from" not in err and " INFO " not in err
