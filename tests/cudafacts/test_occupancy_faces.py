"""Both client faces answer occupancy with the one calculator: a program asking
cudaOccupancyMaxActiveBlocksPerMultiprocessor over block sizes and dynamic shared memory gets the
same table through the libcudart shim (-cudart shared) and through NVIDIA's static cudart on the
libcuda.so.1 replacement, and it is the table cricket.cudafacts.occupancy computes from the emu
device's attributes."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cricket.client import driver_env
from cricket.client.local_server import LocalServer
from cricket.client.run_cli import SHIM
from cricket.cudafacts.occupancy import DeviceLimits, KernelUsage, max_active_blocks

pytestmark = pytest.mark.nvcc
HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


@pytest.fixture(scope="module")
def server():
    local = LocalServer(["emu"])
    yield local
    local.stop()


def _build(tmp: Path, cudart: str) -> Path:
    if not shutil.which("nvcc"):
        pytest.skip("nvcc (CUDA 13) not found on PATH")
    if not SHIM.exists() or not driver_env.available():
        pytest.skip("the shims are not built; run make build")
    exe = tmp / f"occupancy_faces_{cudart}"
    subprocess.run(["nvcc", "-cudart", cudart, "-o", str(exe), str(HERE / "occupancy_faces.cu")], check=True,
                   capture_output=True, timeout=300)
    return exe


def _table(exe: Path, server: LocalServer) -> list[tuple[int, ...]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CRICKET_")}
    res = subprocess.run([sys.executable, "-m", "cricket", "run", "--server", server.address, "--", str(exe)],
                         capture_output=True, text=True, timeout=180, env=env, cwd=ROOT)
    assert res.returncode == 0 and "PASS" in res.stdout, res.stdout + res.stderr
    return [tuple(int(x) for x in line.split()) for line in res.stdout.splitlines() if line[:1].isdigit()]


def test_both_faces_give_the_calculators_answers(tmp_path, server):
    shared = _table(_build(tmp_path, "shared"), server)
    static = _table(_build(tmp_path, "static"), server)
    assert shared == static
    from cricket.client.api import connect
    with connect(server.address) as conn:
        attributes = conn.devices[0].attributes
    dev = DeviceLimits.from_attributes(lambda a: attributes.get(a, 0))
    raised = False
    for threads, regs, static_shared, max_dynamic, block, dynamic, blocks in shared:
        assert threads == 512                      # __launch_bounds__(512)
        raised = raised or max_dynamic > dev.shared_per_block - static_shared
        kernel = KernelUsage(num_regs=regs, shared_size_bytes=static_shared, max_threads_per_block=threads,
                             max_dynamic_shared=max_dynamic)
        assert blocks == max_active_blocks(dev, kernel, block, dynamic), (block, dynamic, max_dynamic)
    assert raised, "cudaFuncSetAttribute(MaxDynamicSharedMemorySize) changed nothing"
    assert any(blocks == 0 for *_, blocks in shared) and any(blocks > 1 for *_, blocks in shared)
