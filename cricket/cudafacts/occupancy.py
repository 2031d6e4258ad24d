"""Occupancy: how many blocks of a kernel one multiprocessor holds at once.

The one calculator behind ``cudaOccupancyMaxActiveBlocksPerMultiprocessor[WithFlags]`` and
``cuOccupancyMaxActiveBlocksPerMultiprocessor[WithFlags]``. It follows the rules NVIDIA publishes in
``cuda_occupancy.h`` (CUDA 13) for compute capability 7.0 and newer: warps, registers (allocated
per warp in units of 256, a block's warps rounded up to the SM's four sub-partitions for the
hardware check), shared memory (allocated in granules, the per-block reservation of the driver
counted, the SM's carveout rounded up to a size the architecture offers), the SM's block limit and,
from 9.0, block barriers. ``tests/cudafacts/test_occupancy.py`` compares it with that header
compiled by the system compiler. Older devices (which CUDA 13 no longer supports) are computed
with the same rules, without the partitioned global caching of 5.x/6.x.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from . import device_attributes as A

KIB = 1024
REGISTER_GRANULARITY = 256          # registers are allocated to a warp in units of this many


@dataclass(frozen=True)
class DeviceLimits:
    """What the calculator needs of a device, from its attributes."""
    major: int
    minor: int
    warp_size: int
    max_threads_per_block: int
    max_threads_per_sm: int
    max_blocks_per_sm: int
    regs_per_block: int
    regs_per_sm: int
    shared_per_block: int
    shared_per_block_optin: int
    shared_per_sm: int
    reserved_shared_per_block: int

    @classmethod
    def from_attributes(cls, attribute: Callable[[int], int]) -> DeviceLimits:
        """``attribute(CUdevice_attribute number)`` is the device's value of it."""
        return cls(major=attribute(A.COMPUTE_CAPABILITY_MAJOR), minor=attribute(A.COMPUTE_CAPABILITY_MINOR),
                   warp_size=attribute(A.WARP_SIZE), max_threads_per_block=attribute(A.MAX_THREADS_PER_BLOCK),
                   max_threads_per_sm=attribute(A.MAX_THREADS_PER_MULTIPROCESSOR),
                   max_blocks_per_sm=attribute(A.MAX_BLOCKS_PER_MULTIPROCESSOR)
                   or blocks_per_sm(attribute(A.COMPUTE_CAPABILITY_MAJOR), attribute(A.COMPUTE_CAPABILITY_MINOR)),
                   regs_per_block=attribute(A.MAX_REGISTERS_PER_BLOCK),
                   regs_per_sm=attribute(A.MAX_REGISTERS_PER_MULTIPROCESSOR),
                   shared_per_block=attribute(A.MAX_SHARED_MEMORY_PER_BLOCK),
                   shared_per_block_optin=attribute(A.MAX_SHARED_MEMORY_PER_BLOCK_OPTIN),
                   shared_per_sm=attribute(A.MAX_SHARED_MEMORY_PER_MULTIPROCESSOR),
                   reserved_shared_per_block=attribute(A.RESERVED_SHARED_MEMORY_PER_BLOCK))


@dataclass(frozen=True)
class KernelUsage:
    """What the calculator needs of a kernel (its ``cudaFuncAttributes``)."""
    num_regs: int
    shared_size_bytes: int              # static shared memory
    max_threads_per_block: int
    max_dynamic_shared: int             # cudaFuncAttributeMaxDynamicSharedMemorySize
    block_barriers: int = 1             # as cudaOccFuncAttributes assumes


def default_max_dynamic_shared(dev: DeviceLimits, static_shared: int) -> int:
    """A kernel's dynamic shared memory limit until ``cudaFuncSetAttribute(...,
    cudaFuncAttributeMaxDynamicSharedMemorySize)`` raises it: what is left of the default per-block
    limit (48 KiB) beside its static shared memory."""
    return max(dev.shared_per_block - static_shared, 0)


def max_dynamic_shared(dev: DeviceLimits, static_shared: int) -> int:
    """The most ``cudaFuncAttributeMaxDynamicSharedMemorySize`` may be set to (the opt-in limit)."""
    return max(max(dev.shared_per_block_optin, dev.shared_per_block) - static_shared, 0)


def blocks_per_sm(major: int, minor: int) -> int:
    """The most blocks an SM of this architecture holds (for a device that does not report
    ``CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR``)."""
    if major == 7:
        return 16 if minor == 5 else 32
    if major == 8:
        return {0: 32, 9: 24}.get(minor, 16)
    if major == 10:
        return 24 if minor == 1 else 32
    if major == 11:
        return 24 if minor == 0 else 32
    return {3: 16, 12: 24}.get(major, 32)


def shared_granularity(major: int) -> int:
    """Shared memory is given to a block in multiples of this many bytes."""
    return 256 if major < 8 else 128


def max_registers_per_thread(major: int) -> int:
    return 255 if major < 7 else 256


def sub_partitions(major: int, minor: int) -> int:
    return 2 if (major, minor) == (6, 0) else 4


def carveouts(major: int, minor: int) -> tuple[int, ...]:
    """The shared-memory sizes (bytes) an SM of this architecture can be configured with."""
    if major == 7:
        return (32 * KIB, 64 * KIB) if minor == 5 else tuple(k * KIB for k in (0, 8, 16, 32, 64, 96))
    base = tuple(k * KIB for k in (0, 8, 16, 32, 64, 100))
    if (major == 8 and minor in (0, 7)):
        return base + (132 * KIB, 164 * KIB)
    if major in (9, 10, 11):
        return base + tuple(k * KIB for k in (132, 164, 196, 228))
    return base                          # 8.6, 8.9, 12.x


def carveout_for(size: int, major: int, minor: int) -> int | None:
    """The smallest configurable shared-memory size of at least ``size``; None when too large."""
    if major < 7:
        return size
    return next((c for c in carveouts(major, minor) if c >= size), None)


def barriers_per_sm(major: int, minor: int, blocks: int) -> int:
    """Block barriers an SM has for ``blocks`` resident blocks."""
    single = (major == 8 and minor != 0) or (major == 10 and minor == 1) or \
        (major == 11 and minor == 0) or major == 12
    return blocks if single else 2 * blocks


def max_active_blocks(dev: DeviceLimits, kernel: KernelUsage, block_size: int, dynamic_shared: int) -> int:
    """Blocks of ``block_size`` threads with ``dynamic_shared`` bytes of dynamic shared memory that
    one multiprocessor runs at once (0 when such a block cannot run at all)."""
    if block_size <= 0:
        raise ValueError(f"block size {block_size}: give a positive number of threads")
    if block_size > dev.max_threads_per_block or block_size > kernel.max_threads_per_block:
        return 0
    warps = -(-block_size // dev.warp_size)
    limits = [dev.max_threads_per_sm // dev.warp_size // warps, dev.max_blocks_per_sm]
    limits.append(_register_limit(dev, kernel, warps))
    limits.append(_shared_limit(dev, kernel, dynamic_shared))
    blocks = min(limits)
    if dev.major >= 9 and kernel.block_barriers > 0:
        blocks = min(blocks, barriers_per_sm(dev.major, dev.minor, dev.max_blocks_per_sm) // kernel.block_barriers)
    return max(blocks, 0)


def _register_limit(dev: DeviceLimits, kernel: KernelUsage, warps: int) -> int:
    per_warp = -(-kernel.num_regs * dev.warp_size // REGISTER_GRANULARITY) * REGISTER_GRANULARITY
    parts = sub_partitions(dev.major, dev.minor)
    assumed = per_warp * (-(-warps // parts) * parts)
    if per_warp * warps > dev.regs_per_block or assumed > dev.regs_per_block \
            or kernel.num_regs > max_registers_per_thread(dev.major):
        return 0
    if per_warp == 0:
        return dev.max_blocks_per_sm
    warps_per_part = dev.regs_per_sm // parts // per_warp
    return warps_per_part * parts // warps


def _shared_limit(dev: DeviceLimits, kernel: KernelUsage, dynamic_shared: int) -> int:
    granule = shared_granularity(dev.major)
    static = kernel.shared_size_bytes + dev.reserved_shared_per_block
    allocated = -(-(static + dynamic_shared) // granule) * granule
    if dynamic_shared > kernel.max_dynamic_shared:
        return 0
    # The per-block limit: the opt-in size when the kernel's maximum asks for more than the default.
    limit = dev.shared_per_block_optin if static + kernel.max_dynamic_shared > dev.shared_per_block \
        else dev.shared_per_block
    if dev.major >= 8:
        limit += dev.reserved_shared_per_block
    if allocated > limit:
        return 0
    if allocated == 0:
        return dev.max_blocks_per_sm
    # The default carveout is all of the SM's shared memory, rounded up to a configurable size; a
    # block that needs more gets the smallest configuration that holds it.
    per_sm = carveout_for(dev.shared_per_sm, dev.major, dev.minor)
    if per_sm is None or per_sm < allocated:
        per_sm = carveout_for(allocated, dev.major, dev.minor)
    return per_sm // allocated if per_sm else 0


def max_cooperative_blocks(dev: DeviceLimits, kernel: KernelUsage, block_size: int, dynamic_shared: int,
                           multiprocessors: int) -> int:
    """The most blocks a cooperative launch of ``kernel`` may have: every block of its grid must be
    resident at once (CUDA Programming Guide, grid synchronisation), so the blocks one
    multiprocessor holds times the multiprocessors."""
    return max_active_blocks(dev, kernel, block_size, dynamic_shared) * multiprocessors
