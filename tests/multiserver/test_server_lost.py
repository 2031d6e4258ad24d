"""One of two servers is killed (SIGKILL) while the program runs: the calls for its devices fail
with cudaErrorDevicesUnavailable, as for a GPU that fell off the bus, and the program goes on using
the other server's device; one error line names the lost server."""
from __future__ import annotations

import os
import signal

import pytest


@pytest.mark.nvcc
def test_program_keeps_the_other_servers_device(fresh_servers, across_servers, run_across):
    a, b = fresh_servers
    proc = run_across([a.address, b.address], across_servers, "survive", 1, 0, popen=True)
    head = []
    for line in proc.stdout:
        head.append(line)
        if line.startswith("READY"):
            break
    assert head and head[-1].startswith("READY"), "".join(head) + proc.stderr.read()
    os.kill(b.process.pid, signal.SIGKILL)
    b.process.wait()
    out, err = proc.communicate("go\n", timeout=300)
    out = "".join(head) + out
    assert proc.returncode == 0, out + err
    assert "lost device: cudaMalloc cudaErrorDevicesUnavailable, cudaMemcpy cudaErrorDevicesUnavailable" in out
    assert "kept device after: 0 of 65536 wrong" in out and "kept device new buffer: 0 of 65536 wrong" in out
    lost = [line for line in err.splitlines() if "was lost" in line]
    assert len(lost) == 1 and b.address in lost[0] and "device(s) 1, 2" in lost[0], err
    assert "Traceback" not in err
