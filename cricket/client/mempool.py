"""Stream-ordered memory: ``cudaMallocAsync``/``cudaFreeAsync``, memory pools, and their driver twins.

A pool lives in the client. Its memory is ordinary device memory of the session (``CR_MEM_ALLOC``),
so it counts against the session's memory budget like ``cudaMalloc``. A block freed into a pool is
kept for reuse by a later allocation of the same rounded size, up to the pool's release threshold;
what the pool holds beyond the threshold goes back to the server at the free, where CUDA gives it
back at the next synchronisation (the same memory in the end, and a session never holds more).
Reuse is safe across streams because a session's server runs all its work in one order.

A free is stream-ordered as CUDA's: the client's queued work goes out first, and the server frees
or the next allocation reuses the block only after the work queued before it.

Pool handles (``cudaMemPool_t``/``CUmemoryPool``) are numbers of this process, shared by the runtime
and the driver face. Each device has a default pool, which is also its current pool until
``cudaDeviceSetMemPool`` names another. Both faces use the same codes here: invalid value 1, out of
memory 2, invalid device 101, not supported 801 mean the same in ``cudaError_t`` and ``CUresult``.
"""
from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass, field

from cricket.client.driver_face import DRIVER_API
from cricket.client.faces import implements
from cricket.client.runtime import RUNTIME as rt
from cricket.client.runtime import hostmem
from cricket.client.runtime_face import RUNTIME_API

log = logging.getLogger(__name__)

SUCCESS, INVALID_VALUE, OUT_OF_MEMORY, INVALID_DEVICE, NOT_SUPPORTED = 0, 1, 2, 101, 801
# cudaMemPoolAttr / CUmemPool_attribute
REUSE_FOLLOW_EVENT_DEPENDENCIES, REUSE_ALLOW_OPPORTUNISTIC, REUSE_ALLOW_INTERNAL_DEPENDENCIES = 1, 2, 3
RELEASE_THRESHOLD, RESERVED_MEM_CURRENT, RESERVED_MEM_HIGH, USED_MEM_CURRENT, USED_MEM_HIGH = 4, 5, 6, 7, 8
ALLOCATION_TYPE_PINNED = 1              # cudaMemAllocationTypePinned
LOCATION_DEVICE = 1                     # cudaMemLocationTypeDevice
HANDLE_TYPE_NONE = 0
ACCESS_NONE, ACCESS_READ_WRITE = 0, 3   # cudaMemAccessFlags
ACCESS_DESC_SIZE = 12                   # cudaMemAccessDesc: location {type, id}, flags
BLOCK_ROUND = 512                       # pool blocks are kept by their size rounded up to this


def _round(size: int) -> int:
    return (size + BLOCK_ROUND - 1) // BLOCK_ROUND * BLOCK_ROUND


@dataclass
class MemPool:
    """One memory pool: its blocks in use, its blocks kept for reuse, and its attributes."""

    handle: int
    device: int
    default: bool
    max_size: int = 0                                     # 0: no limit but the session's
    release_threshold: int = 0
    reuse: list[int] = field(default_factory=lambda: [1, 1, 1])
    used: dict[int, int] = field(default_factory=dict)    # address -> rounded size
    kept: dict[int, list[int]] = field(default_factory=dict)   # rounded size -> free addresses
    reserved: int = 0
    reserved_high: int = 0
    used_high: int = 0
    destroyed: bool = False                               # destroyed with blocks still in use

    @property
    def used_bytes(self) -> int:
        return sum(self.used.values())


class MemPools:
    """The process's pools (handle -> pool) and each device's current pool."""

    def __init__(self) -> None:
        self.pools: dict[int, MemPool] = {}
        self.default: dict[int, MemPool] = {}
        self.current: dict[int, MemPool] = {}
        self.owner: dict[int, MemPool] = {}     # address of a block in use -> its pool
        self._lock = threading.RLock()

    def device_default(self, device: int) -> MemPool:
        _check_device(device)
        with self._lock:
            pool = self.default.get(device)
            if pool is None:
                pool = self.default[device] = MemPool(rt.new_handle(), device, True)
                self.pools[pool.handle] = pool
            return pool

    def device_current(self, device: int) -> MemPool:
        with self._lock:
            return self.current.get(device) or self.device_default(device)

    def pool(self, handle: int) -> MemPool:
        pool = self.pools.get(handle)
        if pool is None or pool.destroyed:
            raise _Refused(INVALID_VALUE, f"{handle:#x} is not a memory pool of this process")
        return pool

    def allocate(self, pool: MemPool, size: int) -> int:
        rounded = _round(size)
        with self._lock:
            ptr = None
            kept = pool.kept.get(rounded)
            while kept and ptr is None:
                candidate = kept.pop()
                pool.reserved -= rounded
                if candidate in rt.allocations:      # gone with a device reset otherwise
                    ptr = candidate
                    pool.reserved += rounded
            if ptr is None:
                if pool.max_size and pool.reserved + rounded > pool.max_size:
                    self._release(pool, 0)
                    if pool.reserved + rounded > pool.max_size:
                        raise _Refused(OUT_OF_MEMORY, f"pool {pool.handle:#x} holds {pool.reserved} of its "
                                                      f"{pool.max_size} bytes; {rounded} more do not fit")
                conn = rt.conn
                res = conn._stub.CR_MEM_ALLOC(rounded)
                if res.status == OUT_OF_MEMORY:
                    self._release(pool, 0)          # what the pool keeps may make room
                    res = conn._stub.CR_MEM_ALLOC(rounded)
                ptr = conn._check(res, "cuMemAllocAsync").ptr
                rt.add_allocation(ptr, rounded)
                pool.reserved += rounded
                pool.reserved_high = max(pool.reserved_high, pool.reserved)
            pool.used[ptr] = rounded
            pool.used_high = max(pool.used_high, pool.used_bytes)
            self.owner[ptr] = pool
            return ptr

    def free(self, ptr: int) -> bool:
        """Give a block back to its pool; False when ``ptr`` is no pool block in use."""
        with self._lock:
            pool = self.owner.pop(ptr, None)
            if pool is None:
                return False
            rounded = pool.used.pop(ptr)
            if ptr not in rt.allocations:           # a device reset freed it
                pool.reserved -= rounded
                return True
            rt.drain()                              # stream order: queued work first
            pool.kept.setdefault(rounded, []).append(ptr)
            if pool.destroyed:
                self._release(pool, 0)
                if not pool.used:
                    self.pools.pop(pool.handle, None)
            else:
                self._release(pool, pool.release_threshold)
            return True

    def _release(self, pool: MemPool, keep: int) -> None:
        """Free kept blocks on the server until the pool reserves at most ``keep`` bytes."""
        for rounded, kept in list(pool.kept.items()):
            while kept and pool.reserved > keep:
                ptr = kept.pop()
                pool.reserved -= rounded
                rt.free_allocation(ptr)
            if not kept:
                del pool.kept[rounded]

    def forget_block(self, ptr: int) -> None:
        """A pool block freed by cudaFree/cuMemFree: the pool no longer holds it."""
        with self._lock:
            pool = self.owner.pop(ptr, None)
            if pool is not None:
                pool.reserved -= pool.used.pop(ptr)

    def forget_all(self) -> None:
        """The session's memory is gone (a device reset, a forked child): every pool is empty."""
        with self._lock:
            self.owner.clear()
            for pool in self.pools.values():
                pool.used.clear()
                pool.kept.clear()
                pool.reserved = 0

    def destroy(self, pool: MemPool) -> None:
        with self._lock:
            if pool.default:
                raise _Refused(INVALID_VALUE, "a device's default memory pool cannot be destroyed")
            for device, current in list(self.current.items()):
                if current is pool:             # "the default mempool becomes the current mempool"
                    del self.current[device]
            self._release(pool, 0)
            if pool.used:                       # freed once its blocks are (cudaMemPoolDestroy's docs)
                pool.destroyed = True
            else:
                del self.pools[pool.handle]


class _Refused(Exception):
    """A pool call fails with ``code`` (the same number in cudaError_t and CUresult)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


POOLS = MemPools()


def _check_device(device: int) -> None:
    if not 0 <= device < len(rt.devices):
        raise _Refused(INVALID_DEVICE, f"device {device} does not exist")


def _refusal(fn):
    """A pool call's refusals as its return code, with one debug line."""
    def call(*args: int) -> int:
        try:
            return fn(*args)
        except _Refused as exc:
            log.debug("%s: %s", fn.__name__, exc)
            return exc.code
    call.__name__ = call.__qualname__ = fn.__name__
    return call


def _store_pool(out: int, pool: MemPool) -> int:
    if not out:
        return INVALID_VALUE
    hostmem.store_u64(out, pool.handle)
    return SUCCESS


# ------------------------------------------------------------------ allocation

@implements(RUNTIME_API, "cudaMallocFromPoolAsync")
@implements(DRIVER_API, "cuMemAllocFromPoolAsync")
@_refusal
def malloc_from_pool_async(out: int, size: int, handle: int, stream: int) -> int:
    pool = POOLS.pool(handle)
    if not out or size == 0:
        return INVALID_VALUE
    rt.stream(stream)                                   # an invalid stream is refused
    hostmem.store_u64(out, POOLS.allocate(pool, size))
    return SUCCESS


@implements(RUNTIME_API, "cudaMallocAsync")
@implements(DRIVER_API, "cuMemAllocAsync")
@_refusal
def malloc_async(out: int, size: int, stream: int) -> int:
    if not out:
        return INVALID_VALUE
    if size == 0:
        # cudaMallocAsync of 0 bytes gives NULL (the runtime), cuMemAllocAsync refuses it
        return INVALID_VALUE
    return malloc_from_pool_async(out, size, POOLS.device_current(rt.thread.device).handle, stream)


@implements(RUNTIME_API, "cudaFreeAsync")
@implements(DRIVER_API, "cuMemFreeAsync")
def free_async(ptr: int, stream: int) -> int:
    """A pool block goes back to its pool; memory from cudaMalloc is freed as cudaFree frees it
    (the documented stream-ordered free of any device pointer)."""
    rt.stream(stream)
    if POOLS.free(ptr):
        return SUCCESS
    if ptr == 0 or ptr not in rt.allocations or (rt.mapped_memory.ranges and rt.mapped_memory.find(ptr)):
        return INVALID_VALUE
    rt.drain()
    return SUCCESS if rt.free_allocation(ptr) else INVALID_VALUE


forget_block = POOLS.forget_block
forget_all = POOLS.forget_all
os.register_at_fork(after_in_child=forget_all)


# ------------------------------------------------------------------ pools

@implements(RUNTIME_API, "cudaMemPoolCreate")
@implements(DRIVER_API, "cuMemPoolCreate")
@_refusal
def mem_pool_create(out: int, alloc_type: int, handle_types: int, location_type: int, location_id: int,
                    max_size: int) -> int:
    """Words of cudaMemPoolProps/CUmemPoolProps (read in C): the allocation and handle types, the
    location, the maximum size."""
    if not out or alloc_type != ALLOCATION_TYPE_PINNED or location_type != LOCATION_DEVICE:
        return INVALID_VALUE
    _check_device(location_id)
    if handle_types != HANDLE_TYPE_NONE:
        log.warning("cudaMemPoolCreate: pools whose memory is exported to other processes "
                    "(handle types %#x) are not supported", handle_types)
        return NOT_SUPPORTED
    pool = MemPool(rt.new_handle(), location_id, False, max_size=max_size)
    with POOLS._lock:
        POOLS.pools[pool.handle] = pool
    return _store_pool(out, pool)


@implements(RUNTIME_API, "cudaMemPoolDestroy")
@implements(DRIVER_API, "cuMemPoolDestroy")
@_refusal
def mem_pool_destroy(handle: int) -> int:
    POOLS.destroy(POOLS.pool(handle))
    return SUCCESS


@implements(RUNTIME_API, "cudaMemPoolTrimTo")
@implements(DRIVER_API, "cuMemPoolTrimTo")
@_refusal
def mem_pool_trim_to(handle: int, keep: int) -> int:
    pool = POOLS.pool(handle)
    rt.drain()
    with POOLS._lock:
        POOLS._release(pool, keep)
    return SUCCESS


@implements(RUNTIME_API, "cudaMemPoolGetAttribute")
@implements(DRIVER_API, "cuMemPoolGetAttribute")
@_refusal
def mem_pool_get_attribute(handle: int, attr: int, value: int) -> int:
    pool = POOLS.pool(handle)
    if not value:
        return INVALID_VALUE
    if REUSE_FOLLOW_EVENT_DEPENDENCIES <= attr <= REUSE_ALLOW_INTERNAL_DEPENDENCIES:
        hostmem.store_i32(value, pool.reuse[attr - REUSE_FOLLOW_EVENT_DEPENDENCIES])
        return SUCCESS
    numbers = {RELEASE_THRESHOLD: pool.release_threshold, RESERVED_MEM_CURRENT: pool.reserved,
               RESERVED_MEM_HIGH: pool.reserved_high, USED_MEM_CURRENT: pool.used_bytes,
               USED_MEM_HIGH: pool.used_high}
    if attr not in numbers:
        return INVALID_VALUE
    hostmem.store_u64(value, numbers[attr])
    return SUCCESS


@implements(RUNTIME_API, "cudaMemPoolSetAttribute")
@implements(DRIVER_API, "cuMemPoolSetAttribute")
@_refusal
def mem_pool_set_attribute(handle: int, attr: int, value: int) -> int:
    pool = POOLS.pool(handle)
    if not value:
        return INVALID_VALUE
    if REUSE_FOLLOW_EVENT_DEPENDENCIES <= attr <= REUSE_ALLOW_INTERNAL_DEPENDENCIES:
        pool.reuse[attr - REUSE_FOLLOW_EVENT_DEPENDENCIES] = 1 if hostmem.load_u32(value) else 0
    elif attr == RELEASE_THRESHOLD:
        pool.release_threshold = hostmem.load_u64(value)
    elif attr in (RESERVED_MEM_HIGH, USED_MEM_HIGH):
        if hostmem.load_u64(value) != 0:      # "It is illegal to set this attribute to a non-zero value"
            return INVALID_VALUE
        with POOLS._lock:
            if attr == RESERVED_MEM_HIGH:
                pool.reserved_high = pool.reserved
            else:
                pool.used_high = pool.used_bytes
    else:
        return INVALID_VALUE
    return SUCCESS


@implements(RUNTIME_API, "cudaMemPoolSetAccess")
@implements(DRIVER_API, "cuMemPoolSetAccess")
@_refusal
def mem_pool_set_access(handle: int, descs: int, count: int) -> int:
    """Only the pool's own device is there to be given access: read-write, which it has."""
    pool = POOLS.pool(handle)
    if count and not descs:
        return INVALID_VALUE
    for i in range(count):
        location_type = hostmem.load_u32(descs + i * ACCESS_DESC_SIZE)
        device = hostmem.load_u32(descs + i * ACCESS_DESC_SIZE + 4)
        flags = hostmem.load_u32(descs + i * ACCESS_DESC_SIZE + 8)
        if location_type != LOCATION_DEVICE or flags not in (ACCESS_NONE, ACCESS_READ_WRITE):
            return INVALID_VALUE
        _check_device(device)
        if device == pool.device and flags != ACCESS_READ_WRITE:
            return INVALID_VALUE            # the pool's device keeps its access
        if device != pool.device:
            return INVALID_DEVICE if flags else SUCCESS
    return SUCCESS


@implements(RUNTIME_API, "cudaMemPoolGetAccess")
@implements(DRIVER_API, "cuMemPoolGetAccess")
@_refusal
def mem_pool_get_access(out: int, handle: int, location_type: int, device: int) -> int:
    pool = POOLS.pool(handle)
    if not out or location_type != LOCATION_DEVICE:
        return INVALID_VALUE
    _check_device(device)
    hostmem.store_u32(out, ACCESS_READ_WRITE if device == pool.device else ACCESS_NONE)
    return SUCCESS


# ------------------------------------------------------------------ each device's pools

@implements(RUNTIME_API, "cudaDeviceGetDefaultMemPool")
@implements(DRIVER_API, "cuDeviceGetDefaultMemPool")
@_refusal
def device_get_default_mem_pool(out: int, device: int) -> int:
    return _store_pool(out, POOLS.device_default(device))


@implements(RUNTIME_API, "cudaDeviceGetMemPool")
@implements(DRIVER_API, "cuDeviceGetMemPool")
@_refusal
def device_get_mem_pool(out: int, device: int) -> int:
    _check_device(device)
    return _store_pool(out, POOLS.device_current(device))


@implements(RUNTIME_API, "cudaDeviceSetMemPool")
@implements(DRIVER_API, "cuDeviceSetMemPool")
@_refusal
def device_set_mem_pool(device: int, handle: int) -> int:
    _check_device(device)
    pool = POOLS.pool(handle)
    if pool.device != device:
        return INVALID_DEVICE
    with POOLS._lock:
        POOLS.current[device] = pool
    return SUCCESS


def _device_location(location_type: int, alloc_type: int) -> None:
    """The cudaMem{Get,Set}*MemPool calls name a location: only a device's pinned memory has pools
    here (host and NUMA pools are not supported)."""
    if location_type != LOCATION_DEVICE or alloc_type != ALLOCATION_TYPE_PINNED:
        raise _Refused(NOT_SUPPORTED if location_type else INVALID_VALUE,
                       f"no pools at location type {location_type} for allocation type {alloc_type}")


@implements(RUNTIME_API, "cudaMemGetDefaultMemPool")
@implements(DRIVER_API, "cuMemGetDefaultMemPool")
@_refusal
def mem_get_default_mem_pool(out: int, location_type: int, device: int, alloc_type: int) -> int:
    _device_location(location_type, alloc_type)
    return device_get_default_mem_pool(out, device)


@implements(RUNTIME_API, "cudaMemGetMemPool")
@implements(DRIVER_API, "cuMemGetMemPool")
@_refusal
def mem_get_mem_pool(out: int, location_type: int, device: int, alloc_type: int) -> int:
    _device_location(location_type, alloc_type)
    return device_get_mem_pool(out, device)


@implements(RUNTIME_API, "cudaMemSetMemPool")
@implements(DRIVER_API, "cuMemSetMemPool")
@_refusal
def mem_set_mem_pool(location_type: int, device: int, alloc_type: int, handle: int) -> int:
    _device_location(location_type, alloc_type)
    return device_set_mem_pool(device, handle)
