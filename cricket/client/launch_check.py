"""Launch configurations the client can refuse itself, before anything is sent: a block or grid
outside the device's limits or the kernel's threads per block (what cuLaunchKernel answers with
CUDA_ERROR_INVALID_VALUE on a GPU). An asynchronous launch then fails at the call, not at the
next synchronising one."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..cudafacts import curesult
from ..cudafacts import device_attributes as A
from .errors import CudaError

_BLOCK_LIMITS = (A.MAX_BLOCK_DIM_X, A.MAX_BLOCK_DIM_Y, A.MAX_BLOCK_DIM_Z)
_GRID_LIMITS = (A.MAX_GRID_DIM_X, A.MAX_GRID_DIM_Y, A.MAX_GRID_DIM_Z)


def launch_problem(grid: Sequence[int], block: Sequence[int], kernel_max_threads: int,
                   attributes: dict[int, int]) -> str | None:
    """Why ``grid`` × ``block`` (three dimensions each) cannot launch, or None when it can."""
    for what, dims, limits in (("grid", grid, _GRID_LIMITS), ("block", block, _BLOCK_LIMITS)):
        for axis, (n, limit) in enumerate(zip(dims, limits)):
            if n < 1:
                return f"{what} dimension {'xyz'[axis]} is {n}; every dimension must be at least 1"
            bound = attributes.get(limit)
            if bound and n > bound:
                return f"{what} dimension {'xyz'[axis]} is {n}, above the device's {bound}"
    threads = block[0] * block[1] * block[2]
    bounds = [b for b in (kernel_max_threads, attributes.get(A.MAX_THREADS_PER_BLOCK, 0)) if b > 0]
    if bounds and threads > min(bounds):
        return f"a block of {threads} threads exceeds the {min(bounds)} threads per block this kernel can run"
    return None


def check_launch(name: str, grid: Sequence[int], block: Sequence[int], kernel_max_threads: int,
                 attributes: dict[int, int]) -> None:
    """Raise the CudaError cuLaunchKernel gives for a configuration :func:`launch_problem` refuses."""
    problem = launch_problem(grid, block, kernel_max_threads, attributes)
    if problem is not None:
        raise CudaError(curesult.INVALID_VALUE, problem, f"launch {name}")


def dims(d: Any) -> tuple[int, int, int]:
    """(x, y, z) of a cr_dim3."""
    return d.x, d.y, d.z
