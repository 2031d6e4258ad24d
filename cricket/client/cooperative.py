"""Cooperative launches (both API faces): ``cudaLaunchCooperativeKernel`` here, and what
``cuLaunchCooperativeKernel`` (``driver_api``) and the cooperative launch attribute of
``cudaLaunchKernelExC`` / ``cuLaunchKernelEx`` hand to :func:`queue`.

A cooperative grid may synchronise as a whole (``cooperative_groups::this_grid().sync()``), so
every block must be resident at once: a grid larger than the device holds (the occupancy
calculator's blocks per multiprocessor times the multiprocessors) fails at the call with
``cudaErrorCooperativeLaunchTooLarge``, a device whose ``cudaDevAttrCooperativeLaunch`` is 0 with
``cudaErrorNotSupported``. The launch itself is queued like any other (no reply); the server asks
its backend for a launch with every block running together (``CR_LAUNCH_COOPERATIVE_ASYNC``).
"""
from __future__ import annotations

import logging

from cricket.client.errors import CudaRuntimeError
from cricket.client.faces import implements
from cricket.client.runtime import RUNTIME, SUCCESS, hostmem
from cricket.client.runtime_calls import _check_config, _dim, _kernel_usage
from cricket.client.runtime_face import RUNTIME_API
from cricket.cudafacts import device_attributes as A
from cricket.cudafacts import occupancy
from cricket.cudafacts.cudart_errors import CODES

log = logging.getLogger(__name__)

rt = RUNTIME
ERR_TOO_LARGE = CODES["cudaErrorCooperativeLaunchTooLarge"]      # CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE too
ERR_NOT_SUPPORTED = CODES["cudaErrorNotSupported"]                # CUDA_ERROR_NOT_SUPPORTED too


def queue(function: int, layout: tuple, param_size: int, usage: occupancy.KernelUsage, grid: tuple,
          block: tuple, shared: int, stream: int, args: int) -> None:
    """Check that the grid can be resident on the calling thread's device and queue the launch
    (``function`` and ``stream``: server handles; ``args``: the ``void *args[]`` array)."""
    device = rt.thread.device
    if not rt.device_attribute(device, A.COOPERATIVE_LAUNCH):
        raise CudaRuntimeError(ERR_NOT_SUPPORTED, f"device {device} has no cooperative launches")
    blocks, threads = grid[0] * grid[1] * grid[2], block[0] * block[1] * block[2]
    most = occupancy.max_cooperative_blocks(rt.occupancy_limits(device), usage, threads, shared,
                                            rt.device_attribute(device, A.MULTIPROCESSOR_COUNT))
    if blocks > most:
        raise CudaRuntimeError(ERR_TOO_LARGE, f"cooperative grid of {blocks} blocks of {threads} threads: "
                               f"device {device} holds at most {most} resident")
    from cricket.protocol import gen as P
    data = hostmem.pack_params(args, layout, param_size) if layout and args else b""
    if rt.mapped_memory.ranges:              # the host's writes to mapped memory go first
        rt.mapped_memory.before_launch(stream)
    rt.conn._stub.CR_LAUNCH_COOPERATIVE_ASYNC_batched(P.cr_launch_args(
        function=function, grid=P.cr_dim3(x=grid[0], y=grid[1], z=grid[2]),
        block=P.cr_dim3(x=block[0], y=block[1], z=block[2]), shared_mem=shared, stream=stream, params=data))
    rt.stats.launches += 1


@implements(RUNTIME_API, "cudaLaunchCooperativeKernel")
def launch_cooperative_kernel(func: int, gxy: int, gz: int, bxy: int, bz: int, args: int, shared: int,
                              stream: int) -> int:
    k = rt.kernel(func)
    grid, block = _dim(gxy, gz), _dim(bxy, bz)
    _check_config(grid, block, shared)
    queue(k.function, k.layout, k.param_size, _kernel_usage(k), grid, block, shared, rt.stream(stream), args)
    return SUCCESS
