"""Device memory per session (--session-memory) and in all (--device-memory) against a real server:
an allocation past a bound fails with CUDA_ERROR_OUT_OF_MEMORY for the session that asked only,
cudaMemGetInfo reports the share left, and what a session held is free again once it is gone."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

import pytest

from cricket.client.api import CudaError, connect
from cricket.cudafacts import curesult

from attacks import allocate_past_the_share
from hostile_peers import HERE, assert_back_to, server_help, warmed_up

MIB = 1 << 20


def test_a_session_past_its_share_gets_out_of_memory_and_others_keep_theirs(start_server):
    server = start_server("--backend", "emu", "--session-memory", "64M")
    baseline = warmed_up(server)
    with connect(server.address) as other:
        theirs = other.alloc(64 * MIB)                 # another session has a share of its own
        assert other.mem_get_info() == (0, 64 * MIB)
        allocate_past_the_share(server, 64 * MIB)
        theirs.free()
    assert_back_to(server, baseline)


def test_the_server_budget_bounds_all_sessions_and_a_closed_session_gives_its_share_back(start_server):
    server = start_server("--backend", "emu", "--session-memory", "64M", "--device-memory", "96M")
    baseline = warmed_up(server)
    with connect(server.address) as second:
        with connect(server.address) as first:
            first.alloc(64 * MIB)
            assert second.mem_get_info()[0] == 32 * MIB
            second.alloc(32 * MIB)
            with pytest.raises(CudaError) as refused:
                second.alloc(MIB)
            assert refused.value.code == curesult.OUT_OF_MEMORY
            assert "--device-memory" in refused.value.message
        for _ in range(200):                            # the server frees a closed session on its worker
            if second.mem_get_info()[0] == 32 * MIB:
                break
            time.sleep(0.05)
        assert second.mem_get_info() == (32 * MIB, 64 * MIB)
        second.alloc(32 * MIB)
    assert_back_to(server, baseline)


def test_a_cuda_program_sees_its_share_and_cuda_error_memory_allocation(start_server, tmp_path):
    if not shutil.which("nvcc"):
        pytest.skip("nvcc (CUDA 13) not found on PATH")
    exe = tmp_path / "quota_probe"
    built = subprocess.run(["nvcc", "-cudart", "shared", "-o", str(exe), str(HERE / "programs" / "quota_probe.cu")],
                           capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    server = start_server("--backend", "emu", "--session-memory", "100M")
    run = subprocess.run([sys.executable, "-m", "cricket", "run", "--", str(exe)], capture_output=True,
                         text=True, timeout=120, env={**os.environ, "CRICKET_SERVER": server.address},
                         cwd=HERE.parents[1])
    assert run.returncode == 0, run.stderr
    lines = dict(line.split(" ", 1) for line in run.stdout.splitlines())
    assert lines["before"] == f"{100 * MIB} {100 * MIB}"
    assert lines["allocated"] == "6 cudaErrorMemoryAllocation"
    assert lines["after"] == f"{4 * MIB} {100 * MIB}"
    assert lines["again"] == "cudaSuccess"


def test_help_shows_the_memory_and_image_limits():
    text = server_help()
    assert "--session-memory SIZE" in text and "cudaErrorMemoryAllocation" in text
    assert "--device-memory SIZE" in text and "half of this host's memory" in text
    assert "--max-image SIZE" in text and "(default 256M)" in text


def test_a_size_that_is_not_one_is_refused_at_start():
    r = subprocess.run([sys.executable, "-m", "cricket", "server", "--session-memory", "lots"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "'lots' is not a size" in r.stderr


def test_a_larger_device_malloc_heap_counts_against_the_share(start_server):
    """cudaDeviceSetLimit(cudaLimitMallocHeapSize): what the heap adds beyond the default 8 MiB is
    device memory the session holds, so a heap cannot be a way around --session-memory."""
    from cricket.cudafacts.limits import MALLOC_HEAP_SIZE
    server = start_server("--backend", "emu", "--session-memory", "64M")
    with connect(server.address) as conn:
        with pytest.raises(CudaError) as refused:
            conn.set_limit(MALLOC_HEAP_SIZE, 128 * MIB)
        assert refused.value.code == curesult.OUT_OF_MEMORY
        conn.set_limit(MALLOC_HEAP_SIZE, 40 * MIB)         # 32 MiB beyond the default
        assert conn.mem_get_info() == (32 * MIB, 64 * MIB)
        with pytest.raises(CudaError):
            conn.alloc(48 * MIB)
        conn.set_limit(MALLOC_HEAP_SIZE, 8 * MIB)          # back to the default: the share is whole
        assert conn.mem_get_info() == (64 * MIB, 64 * MIB)
