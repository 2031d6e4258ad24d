"""Cooperative launches on the emulated device: ``cooperative_groups::this_grid().sync()``.

nvcc compiles ``grid.sync()`` to a barrier in global memory whose address the kernel reads from
``%envreg1:%envreg2`` (high and low halves; a kernel finding 0 there was not launched
cooperatively and executes ``trap``): each block's first thread adds to the barrier word and spins
until the last block has arrived. That needs every block of the grid running at once, which a GPU
guarantees by refusing a cooperative grid larger than it holds resident. The emulator runs such a
launch as one batch of all its CTAs (never split over batches or worker processes), so every block
steps through the spin loop together, with the barrier word zeroed in the device's arena for the
duration of the launch.
"""
from __future__ import annotations

from ...cudafacts import device_attributes as A
from ...cudafacts import occupancy
from ...cudafacts.curesult import COOPERATIVE_LAUNCH_TOO_LARGE
from .errors import EmuError
from .executor import LaunchConfig, block_threads, ctas_per_batch, grid_ctas
from .memory import DeviceArena

WORKSPACE_BYTES = 8          # the barrier word grid.sync() adds to (at +4) and its neighbour


def check_resident(attributes: dict[int, int], function_attributes: dict, grid, block, dynamic_shared: int) -> None:
    """Refuse a cooperative grid larger than the device reports resident, as CUDA does."""
    dev = occupancy.DeviceLimits.from_attributes(lambda a: int(attributes.get(a, 0)))
    static_shared = int(function_attributes.get("shared_size_bytes", 0))
    kernel = occupancy.KernelUsage(
        num_regs=int(function_attributes.get("num_regs", 0)), shared_size_bytes=static_shared,
        max_threads_per_block=int(function_attributes.get("max_threads_per_block", 1024)),
        max_dynamic_shared=occupancy.default_max_dynamic_shared(dev, static_shared))
    most = occupancy.max_cooperative_blocks(dev, kernel, block_threads(block), dynamic_shared,
                                            int(attributes.get(A.MULTIPROCESSOR_COUNT, 1)))
    if grid_ctas(grid) > most:
        raise EmuError(COOPERATIVE_LAUNCH_TOO_LARGE,
                       f"cooperative grid of {grid_ctas(grid)} blocks of {block_threads(block)} threads: the "
                       f"device holds at most {most} such blocks resident")


def begin(arena: DeviceArena, ir, cfg: LaunchConfig) -> int:
    """Make ``cfg`` one batch of every CTA with a zeroed grid barrier; returns the barrier's address."""
    cfg.max_lanes = max(cfg.max_lanes, grid_ctas(cfg.grid) * block_threads(cfg.block))
    if ctas_per_batch(ir, cfg) < grid_ctas(cfg.grid):
        raise EmuError(COOPERATIVE_LAUNCH_TOO_LARGE,
                       f"cooperative grid of {grid_ctas(cfg.grid)} blocks: their shared and local memory "
                       "exceed what the emulator runs as one batch")
    workspace = arena.alloc(WORKSPACE_BYTES)
    arena.write(workspace, bytes(WORKSPACE_BYTES))
    cfg.grid_workspace = workspace
    return workspace
