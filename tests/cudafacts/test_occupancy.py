"""cricket's one occupancy calculator against NVIDIA's: ``cuda_occupancy.h`` from the CUDA headers,
compiled by the system C++ compiler (``occupancy_oracle.cpp``), over every combination of
registers, block size, static and dynamic shared memory below, for devices of each architecture
CUDA 13 supports (their attributes as such GPUs report them)."""
from __future__ import annotations

import itertools
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from cricket.cudafacts import device_attributes as A
from cricket.cudafacts.occupancy import (DeviceLimits, KernelUsage, blocks_per_sm, default_max_dynamic_shared,
                                         max_active_blocks)

HERE = Path(__file__).resolve().parent
CUDA_INCLUDE = Path(os.environ.get("CUDA_HOME", "/usr/local/cuda")) / "include"
K = 1024

# (major, minor, threads per SM, max blocks per SM, shared per SM, opt-in per block, reserved per block)
DEVICES = {
    "sm_75 (T4)": (7, 5, 1024, 16, 64 * K, 64 * K, 0),
    "sm_80 (A100)": (8, 0, 2048, 32, 164 * K, 163 * K, 1 * K),
    "sm_86 (A10)": (8, 6, 1536, 16, 100 * K, 99 * K, 1 * K),
    "sm_89 (L4)": (8, 9, 1536, 24, 100 * K, 99 * K, 1 * K),
    "sm_90 (H100)": (9, 0, 2048, 32, 228 * K, 227 * K, 1 * K),
    "sm_120": (12, 0, 1536, 24, 100 * K, 99 * K, 1 * K),
}


def _device(spec) -> DeviceLimits:
    major, minor, threads, blocks, per_sm, optin, reserved = spec
    return DeviceLimits(major=major, minor=minor, warp_size=32, max_threads_per_block=1024, max_threads_per_sm=threads,
                        max_blocks_per_sm=blocks, regs_per_block=65536, regs_per_sm=65536, shared_per_block=48 * K,
                        shared_per_block_optin=optin, shared_per_sm=per_sm, reserved_shared_per_block=reserved)


@pytest.fixture(scope="module")
def oracle(tmp_path_factory) -> Path:
    cxx = shutil.which("g++") or shutil.which("c++")
    if not cxx or not (CUDA_INCLUDE / "cuda_occupancy.h").exists():
        pytest.skip("needs a C++ compiler and the CUDA 13 headers (cuda_occupancy.h)")
    exe = tmp_path_factory.mktemp("occupancy") / "occupancy_oracle"
    subprocess.run([cxx, "-O1", f"-I{CUDA_INCLUDE}", "-o", str(exe), str(HERE / "occupancy_oracle.cpp")], check=True)
    return exe


def _cases(dev: DeviceLimits):
    for regs, block, static, dynamic, raised in itertools.product(
            (0, 16, 32, 40, 64, 96, 128, 168, 255), (32, 64, 80, 96, 128, 192, 256, 384, 512, 768, 1024),
            (0, 1100, 12 * K), (0, 3000, 10000, 20 * K, 33000, 48 * K, 90 * K), (False, True)):
        limit = dev.shared_per_block_optin - static if raised else default_max_dynamic_shared(dev, static)
        yield KernelUsage(num_regs=regs, shared_size_bytes=static, max_threads_per_block=1024,
                          max_dynamic_shared=limit), block, dynamic


@pytest.mark.parametrize("name", DEVICES)
def test_occupancy_matches_nvidias_calculator(oracle, name):
    dev = _device(DEVICES[name])
    cases = list(_cases(dev))
    lines = [f"{dev.major} {dev.minor} {dev.max_threads_per_block} {dev.max_threads_per_sm} {dev.regs_per_block} "
             f"{dev.regs_per_sm} {dev.warp_size} {dev.shared_per_block} {dev.shared_per_sm} "
             f"{dev.shared_per_block_optin} {dev.reserved_shared_per_block} | {k.max_threads_per_block} "
             f"{k.num_regs} {k.shared_size_bytes} {k.max_dynamic_shared} | {block} {dynamic}"
             for k, block, dynamic in cases]
    out = subprocess.run([str(oracle)], input="\n".join(lines) + "\n", capture_output=True, text=True,
                         check=True).stdout.split("\n")
    compared = 0
    for (k, block, dynamic), expected in zip(cases, out):
        if expected.startswith("error"):       # a case NVIDIA's calculator refuses as input
            continue
        compared += 1
        assert max_active_blocks(dev, k, block, dynamic) == int(expected), (name, k, block, dynamic)
    assert compared > len(cases) // 2


def test_the_example_of_the_issue_agrees_on_both_faces_formula():
    # Block of 80 threads, 40 registers on an sm_75-class device: warps bound it (3 warps a block,
    # 32 warps an SM: 10 blocks), not registers (16) nor the block limit (16).
    assert max_active_blocks(_device(DEVICES["sm_75 (T4)"]), KernelUsage(40, 0, 1024, 48 * K), 80, 0) == 10


def test_limits_come_from_the_device_attributes():
    values = {A.COMPUTE_CAPABILITY_MAJOR: 9, A.COMPUTE_CAPABILITY_MINOR: 0, A.WARP_SIZE: 32,
              A.MAX_THREADS_PER_BLOCK: 1024, A.MAX_THREADS_PER_MULTIPROCESSOR: 2048,
              A.MAX_BLOCKS_PER_MULTIPROCESSOR: 32, A.MAX_REGISTERS_PER_BLOCK: 65536,
              A.MAX_REGISTERS_PER_MULTIPROCESSOR: 65536, A.MAX_SHARED_MEMORY_PER_BLOCK: 48 * K,
              A.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: 227 * K, A.MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: 228 * K,
              A.RESERVED_SHARED_MEMORY_PER_BLOCK: K}
    assert DeviceLimits.from_attributes(values.__getitem__) == _device(DEVICES["sm_90 (H100)"])


@pytest.mark.parametrize("name", DEVICES)
def test_an_unreported_block_limit_comes_from_the_architecture(name):
    dev = _device(DEVICES[name])
    assert blocks_per_sm(dev.major, dev.minor) == dev.max_blocks_per_sm


def test_a_block_the_kernel_cannot_run_gets_no_blocks():
    dev = _device(DEVICES["sm_80 (A100)"])
    assert max_active_blocks(dev, KernelUsage(32, 0, 256, 48 * K), 512, 0) == 0     # __launch_bounds__(256)
    assert max_active_blocks(dev, KernelUsage(32, 0, 1024, 48 * K), 1025, 0) == 0   # over the device's limit
    assert max_active_blocks(dev, KernelUsage(32, 0, 1024, 48 * K), 128, 60 * K) == 0  # not opted in
    with pytest.raises(ValueError):
        max_active_blocks(dev, KernelUsage(32, 0, 1024, 48 * K), 0, 0)
