"""bench/multiserver.py (`cricket bench --only servers`) with the tiny size set: the copy between
two devices checked and measured against the copy staged through the host, on one server with two
devices and, where the multi-server client is in the build, on two servers; where it is not, the
report says so in one line instead of failing."""
from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.nvcc
def test_servers_bench_measures_the_peer_copy_against_the_staged_one():
    if not shutil.which("nvcc"):
        pytest.skip("nvcc (CUDA 13) not found on PATH")
    r = subprocess.run([sys.executable, "-m", "bench.multiserver", "--quick"], cwd=ROOT, capture_output=True,
                       text=True, timeout=300, env=dict(os.environ, CRICKET_BENCH_TINY="1"))
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    assert "Traceback" not in r.stderr
    rows = [line for line in r.stdout.splitlines() if line.startswith("| cudaMemcpyPeer 1 MiB")]
    one = [row for row in rows if "two devices of one server" in row]
    assert len(one) == 1 and re.search(r"\| [\d.]+ [kMG]?B/s \(.*n=2\)", one[0]), r.stdout
    assert "D→H + H→D through the client" in one[0]
    two = [row for row in rows if "device of server a → device of server b" in row]
    if importlib.util.find_spec("cricket.client.servers") is None:
        assert not two
        missing = [line for line in r.stdout.splitlines() if "two servers: not measured" in line]
        assert len(missing) == 1 and "multi-server client" in missing[0]
    else:
        assert len(two) == 1 and "D→H from a + H→D to b" in two[0], r.stdout
