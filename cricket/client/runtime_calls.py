"""The runtime-API functions the libcudart shim forwards (``cext/preload/forward_runtime.c``).

Each takes the C arguments as unsigned 64-bit integers (a ``dim3`` as two: ``x | y << 32`` and
``z``; signed values in two's complement), writes out-parameters through ``hostmem`` and returns
the ``cudaError_t``; an exception becomes the matching error code and the thread's last error
(the guard of ``runtime_face.RUNTIME_API``). ``runtime_api`` imports this module.
"""
from __future__ import annotations

import logging

from cricket import _select
from cricket.client import context_limits, device_records, launch_attributes, managed, mapped, mempool
from cricket.client.faces import implements
from cricket.client.runtime_face import RUNTIME_API
from cricket.client.runtime_local import i32 as _i32
from cricket.cudafacts import occupancy, streams
from cricket.cudafacts.cudart_errors import CODES, CUDART_VERSION
from cricket.client.runtime import (
    D2D, D2H,
    ERR_HOST_NOT_REGISTERED, ERR_HOST_REGISTERED, ERR_INVALID_CONFIG, ERR_INVALID_DEVICE,
    ERR_INVALID_HANDLE, ERR_INVALID_VALUE, ERR_MEMORY, ERR_NOT_READY, H2D, H2H,
    RUNTIME, SCHEDULE_AUTO, SCHEDULE_BLOCKING_SYNC, SCHEDULE_MASK, SCHEDULE_SPIN, SCHEDULE_YIELD,
    SUCCESS, CudaRuntimeError, KernelRecord, StreamRef, cuda_error_of, hostmem,
)

log = logging.getLogger(__name__)

rt = RUNTIME


def _dim(xy: int, z: int) -> tuple[int, int, int]:
    return xy & 0xFFFFFFFF, xy >> 32, z & 0xFFFFFFFF


def _synchronizing() -> None:
    """What every synchronising call does first: finish the deferred device-to-host copies. (What
    kernels wrote into mapped memory comes back after the synchronisation: ``Runtime.synchronized``.)"""
    rt.drain()


# ------------------------------------------------------------------ errors and devices

# What the process answers from what it holds (the last error, the device count, the thread's
# device, HELLO's attributes): compiled entries in cext/runtime_local.pyx, their twin in
# runtime_local.py.
for _name, _entry in _select.load("cricket._cext.runtime_local", "cricket.client.runtime_local").entries(rt).items():
    RUNTIME_API.register(_name, _entry)


@implements(RUNTIME_API, "cudaInitDevice")
def init_device(device: int, device_flags: int, flags: int) -> int:
    device = _i32(device)
    return SUCCESS if 0 <= device < len(rt.devices) else ERR_INVALID_DEVICE


DEVICE_FLAGS_MASK = 0xFF      # cudaDeviceMask: the schedule, MapHost, LmemResizeToMax, SyncMemops
VALID_SCHEDULES = (SCHEDULE_AUTO, SCHEDULE_SPIN, SCHEDULE_YIELD, SCHEDULE_BLOCKING_SYNC)


@implements(RUNTIME_API, "cudaSetDeviceFlags")
def set_device_flags(flags: int) -> int:
    """Records the current device's flags. Their schedule says how the process waits for the
    server, as CUDA's says how it waits for the GPU (runtime.apply_schedule)."""
    flags &= 0xFFFFFFFF
    schedule = flags & SCHEDULE_MASK
    if flags & ~DEVICE_FLAGS_MASK or schedule not in VALID_SCHEDULES:
        return ERR_INVALID_VALUE
    rt.conn       # noqa: B018 -- the call initialises the runtime, as CUDA's does
    rt.device_flags[rt.thread.device] = flags
    rt.set_schedule(schedule)
    return SUCCESS


@implements(RUNTIME_API, "cudaGetDeviceFlags")
def get_device_flags(flags: int) -> int:
    if not flags:
        return ERR_INVALID_VALUE
    hostmem.store_u32(flags, rt.device_flags.get(rt.thread.device, 0))
    return SUCCESS


@implements(RUNTIME_API, "cricket_device_attributes")
def device_attribute_table(device: int, values: int, count: int) -> int:
    """Attributes 0 .. count-1 of ``device`` as ints (0 where HELLO has none), for
    cudaGetDeviceProperties (forward_runtime.c): one call for the whole structure."""
    device = _i32(device)
    devices = rt.devices
    if not 0 <= device < len(devices):
        return ERR_INVALID_DEVICE
    if not values or not 0 < count <= 1024:
        return ERR_INVALID_VALUE
    attributes = devices[device].attributes
    hostmem.write(values, b"".join((attributes.get(a, 0) & 0xFFFFFFFF).to_bytes(4, "little")
                                   for a in range(count)))
    return SUCCESS


@implements(RUNTIME_API, "cricket_device_identity")
def device_identity(device: int, name: int, name_size: int, uuid: int, total_memory: int) -> int:
    device = _i32(device)
    devices = rt.devices
    if not 0 <= device < len(devices):
        return ERR_INVALID_DEVICE
    d = devices[device]
    hostmem.write(name, d.name.encode()[:name_size - 1] + b"\0")
    hostmem.write(uuid, d.uuid[:16].ljust(16, b"\0"))
    hostmem.store_u64(total_memory, d.total_memory)
    return SUCCESS


@implements(RUNTIME_API, "cudaDeviceSynchronize")
def device_synchronize() -> int:
    rt.synchronize_device(before=_synchronizing)
    return SUCCESS


@implements(RUNTIME_API, "cudaDeviceReset")
def device_reset() -> int:
    """Frees this process's device memory, streams and events (modules stay loaded)."""
    conn = rt.reset_device("cudaDeviceReset", before=_synchronizing)
    mempool.forget_all()
    for server in rt.forget_per_thread_streams():
        if rt.servers is None:     # with several servers, each server's go with its session
            conn._stub.CR_STREAM_DESTROY(server)
    _device_cache_config.pop(rt.thread.device, None)
    rt.thread.last_error = 0
    return SUCCESS


@implements(RUNTIME_API, "cudaMemGetInfo")
def mem_get_info(free: int, total: int) -> int:
    rt.store_mem_info(free, total)
    return SUCCESS


@implements(RUNTIME_API, "cudaDriverGetVersion")
def driver_get_version(version: int) -> int:
    if not version:
        return ERR_INVALID_VALUE
    hostmem.store_i32(version, rt.connection().driver_version or CUDART_VERSION)
    return SUCCESS


# Cache and shared-memory-bank preferences: hints with no effect on results. The cache preference
# is remembered for cudaDeviceGetCacheConfig; the emulated sm_75 (like every GPU since Maxwell) has
# fixed 4-byte banks, so cudaDeviceGetSharedMemConfig reports that whatever was asked.
_FUNC_CACHE = range(4)                 # cudaFuncCachePreferNone, PreferShared, PreferL1, PreferEqual
_SHARED_MEM_CONFIG = range(3)          # cudaSharedMemBankSizeDefault, FourByte, EightByte
_BANK_SIZE_FOUR_BYTE = 1
_device_cache_config: dict[int, int] = {}


@implements(RUNTIME_API, "cudaDeviceSetCacheConfig")
def device_set_cache_config(config: int) -> int:
    if config not in _FUNC_CACHE:
        return ERR_INVALID_VALUE
    _device_cache_config[rt.thread.device] = config
    return SUCCESS


@implements(RUNTIME_API, "cudaDeviceGetCacheConfig")
def device_get_cache_config(config: int) -> int:
    if not config:
        return ERR_INVALID_VALUE
    hostmem.store_i32(config, _device_cache_config.get(rt.thread.device, 0))
    return SUCCESS


def _func_hint(func: int, config: int, values: range) -> int:
    """A per-kernel hint: checked (a registered kernel, a known value), then without effect."""
    if func not in rt.kernels:
        return CODES["cudaErrorInvalidDeviceFunction"]
    return SUCCESS if config in values else ERR_INVALID_VALUE


@implements(RUNTIME_API, "cudaFuncSetCacheConfig")
def func_set_cache_config(func: int, config: int) -> int:
    return _func_hint(func, config, _FUNC_CACHE)


@implements(RUNTIME_API, "cudaDeviceSetSharedMemConfig")
def device_set_shared_mem_config(config: int) -> int:
    return SUCCESS if config in _SHARED_MEM_CONFIG else ERR_INVALID_VALUE


@implements(RUNTIME_API, "cudaDeviceGetSharedMemConfig")
def device_get_shared_mem_config(config: int) -> int:
    if not config:
        return ERR_INVALID_VALUE
    hostmem.store_i32(config, _BANK_SIZE_FOUR_BYTE)
    return SUCCESS


@implements(RUNTIME_API, "cudaFuncSetSharedMemConfig")
def func_set_shared_mem_config(func: int, config: int) -> int:
    return _func_hint(func, config, _SHARED_MEM_CONFIG)


@implements(RUNTIME_API, "cudaProfilerStart", "cudaProfilerStop")
def profiler_start_stop() -> int:
    return SUCCESS                     # no profiler is attached to a remote device


@implements(RUNTIME_API, "cudaDeviceGetLimit")
def device_get_limit(value: int, limit: int) -> int:
    current = context_limits.get_limit(limit)
    if not value or current is None:
        return ERR_INVALID_VALUE
    hostmem.store_u64(value, current)
    return SUCCESS


@implements(RUNTIME_API, "cudaDeviceSetLimit")
def device_set_limit(limit: int, value: int) -> int:
    return SUCCESS if context_limits.set_limit(rt, limit, value) else ERR_INVALID_VALUE


# ------------------------------------------------------------------ memory

@implements(RUNTIME_API, "cudaMalloc")
def malloc(dev_ptr: int, size: int) -> int:
    if not dev_ptr:
        return ERR_INVALID_VALUE
    if size == 0:
        hostmem.store_u64(dev_ptr, 0)
        return SUCCESS
    conn = rt.conn
    res = conn._stub.CR_MEM_ALLOC(size)
    if res.status != 0:
        log.debug("cudaMalloc(%d): %s", size, getattr(res, "message", ""))
        return ERR_MEMORY if res.status == 2 else conn._check(res, "cuMemAlloc")
    rt.add_allocation(res.ptr, size)
    hostmem.store_u64(dev_ptr, res.ptr)
    return SUCCESS


@implements(RUNTIME_API, "cudaMallocPitch")
def malloc_pitch(dev_ptr: int, pitch: int, width: int, height: int) -> int:
    if not pitch:
        return ERR_INVALID_VALUE
    p = (max(width, 1) + 255) & ~255
    err = malloc(dev_ptr, p * height)
    if err == SUCCESS:
        hostmem.store_u64(pitch, p)
    return err


@implements(RUNTIME_API, "cudaFree")
def free(ptr: int) -> int:
    if not ptr:
        rt.conn   # noqa: B018 -- cudaFree(0) is the conventional way to initialise the runtime
        return SUCCESS
    # cudaErrorInvalidDevicePointer is deprecated since CUDA 10.1; the runtime API docs of cudaFree
    # name cudaErrorInvalidValue, which static cudart 13 passes on from cuMemFree (traced)
    if managed.owns(ptr):
        managed.free(ptr)
        return SUCCESS
    if ptr not in rt.allocations or (rt.mapped_memory.ranges and rt.mapped_memory.find(ptr)):
        return ERR_INVALID_VALUE        # mapped memory's device copy goes with its host memory
    _synchronizing()
    mempool.forget_block(ptr)           # a block of a memory pool leaves its pool
    if not rt.free_allocation(ptr):
        return ERR_INVALID_VALUE        # another thread freed it meanwhile
    return SUCCESS


@implements(RUNTIME_API, "cudaMallocHost")
def malloc_host(ptr: int, size: int) -> int:
    return host_alloc(ptr, size, 0)


@implements(RUNTIME_API, "cudaHostAlloc")
def host_alloc(ptr: int, size: int, flags: int) -> int:
    """Portable and write-combined are hints here; mapped memory gets a device copy (``mapped``)."""
    if not ptr or flags & ~mapped.ALLOC_FLAGS:
        return ERR_INVALID_VALUE
    hostmem.store_u64(ptr, rt.mapped_memory.host_alloc(size, flags))
    return SUCCESS


@implements(RUNTIME_API, "cudaFreeHost")
def free_host(ptr: int) -> int:
    if ptr:
        _synchronizing()            # as CUDA's: no copy still lands in the memory once it is freed
        rt.mapped_memory.host_free(ptr)
    return SUCCESS


@implements(RUNTIME_API, "cudaHostRegister")
def host_register(ptr: int, size: int, flags: int) -> int:
    if not ptr or not size or flags & ~mapped.REGISTER_FLAGS:
        return ERR_INVALID_VALUE
    if ptr in rt.host_registered:
        return ERR_HOST_REGISTERED
    rt.mapped_memory.register(ptr, size, flags)
    return SUCCESS


@implements(RUNTIME_API, "cudaHostUnregister")
def host_unregister(ptr: int) -> int:
    return SUCCESS if rt.unregister_host(ptr) else ERR_HOST_NOT_REGISTERED


@implements(RUNTIME_API, "cudaHostGetFlags")
def host_get_flags(flags: int, ptr: int) -> int:
    value = rt.mapped_memory.host_flags(ptr)
    if value is None or not flags:
        return ERR_INVALID_VALUE
    hostmem.store_u32(flags, value)
    return SUCCESS


@implements(RUNTIME_API, "cudaHostGetDevicePointer")
def host_get_device_pointer(device_ptr: int, host_ptr: int, flags: int) -> int:
    if not device_ptr or flags:
        return ERR_INVALID_VALUE
    address = rt.mapped_memory.device_pointer(host_ptr)
    if address is None:
        log.debug("cudaHostGetDevicePointer(%#x): not pinned host memory", host_ptr)
        return ERR_INVALID_VALUE
    hostmem.store_u64(device_ptr, address)
    return SUCCESS


@implements(RUNTIME_API, "cudaPointerGetAttributes")
def pointer_get_attributes(values: int, ptr: int) -> int:
    """(cudaMemoryType, device, device pointer, host pointer) for forward_runtime.c; the memory
    types are 0 unregistered, 1 host, 2 device, 3 managed."""
    found = rt.mapped_memory.find(ptr) if rt.mapped_memory.ranges else None
    if found is not None:
        r, offset = found
        kind = 3 if r.snapshot is not None else 1       # cudaMemoryTypeManaged: managed.py's ranges
        hostmem.store_i64s(values, (kind, rt.thread.device, r.device + offset, r.host + offset))
    elif rt.is_device(ptr):
        hostmem.store_i64s(values, (2, device_records.device_of(rt, ptr), ptr, 0))
    elif rt.is_pinned(ptr):
        hostmem.store_i64s(values, (1, rt.thread.device, 0, ptr))
    else:
        hostmem.store_i64s(values, (0, -1, 0, ptr))
    return SUCCESS


# ------------------------------------------------------------------ copies and memset

def _copy(dst: int, src: int, count: int, kind: int, stream_handle: int, sync: bool,
          checked_dst: bool = False) -> int:
    """One copy; ``checked_dst`` when the caller has checked that the device range exists."""
    if count == 0:
        return SUCCESS
    if rt.mapped_memory.ranges:
        dst, src, kind = rt.mapped_memory.resolve_copy(dst, src, kind)
    elif kind != H2D and kind != D2H:
        kind = rt.kind_of(dst, src, kind)
    stream = 0 if stream_handle == 0 else rt.stream(stream_handle)
    if kind == H2H:
        if sync:
            _synchronizing()
        else:
            rt.settle_host_range(src, count)
            rt.settle_host_range(dst, count)
        hostmem.write(dst, hostmem.view(src, count))
    elif kind == H2D:
        # The bytes are taken now, so an asynchronous copy never waits. A synchronous one from
        # pageable memory returns once the source may be reused, as CUDA's does (its errors come
        # from the next synchronising call), provided the destination is known to be valid here;
        # from pinned memory it waits for the copy, as in CUDA.
        if sync:
            if not rt.drain_is_idle():          # (two calls fewer per copy than _synchronizing)
                _synchronizing()
            if not rt.is_pinned(src) and (checked_dst or rt.in_allocation(dst, count)):
                sync = False
        rt.htod(dst, src, count, stream, bool(sync))
    elif kind == D2H:
        if sync or not rt.is_pinned(dst):       # pageable destination: synchronous, as in CUDA
            if rt.drain_is_idle():              # nothing to complete first: one step
                rt.dtoh(dst, src, count, stream)
            else:
                started = rt.dtoh_start(dst, src, count, stream)
                _synchronizing()
                rt.dtoh_finish(started)
        else:
            rt.defer_dtoh(rt.dtoh_start(dst, src, count, stream), dst, count)
    else:
        if sync:
            _synchronizing()
        rt.dtod(dst, src, count, stream, bool(sync))
    if sync and rt.mapped_memory.device_dirty:
        rt.synchronized()               # a blocking copy synchronises: kernels' mapped writes come back
    return SUCCESS


_Stream = StreamRef


def memcpy(dst: int, src: int, count: int, kind: int) -> int:
    return _copy(dst, src, count, kind, 0, True)


# cudaMemcpy's entry takes a synchronous copy between pinned memory the server maps and the device
# straight to its call in the plain case (compiled in cext/pinned_copy.pyx, its twin pinned_copy.py),
# and runs ``memcpy`` behind the guard otherwise.
RUNTIME_API.register("cudaMemcpy", _select.load("cricket._cext.pinned_copy", "cricket.client.pinned_copy")
                     .PinnedMemcpy(memcpy, rt, True))


@implements(RUNTIME_API, "cudaMemcpy_ptds")
def memcpy_ptds(dst: int, src: int, count: int, kind: int) -> int:
    """cudaMemcpy ordered in the calling thread's per-thread default stream."""
    return _copy(dst, src, count, kind, streams.PER_THREAD, True)


@implements(RUNTIME_API, "cudaMemcpyAsync")
def memcpy_async(dst: int, src: int, count: int, kind: int, stream: int) -> int:
    return _copy(dst, src, count, kind, stream, False)


@implements(RUNTIME_API, "cudaMemcpy2DAsync")
def memcpy_2d(dst: int, dpitch: int, src: int, spitch: int, width: int, height: int, kind: int,
              stream: int, sync: int) -> int:
    if width > dpitch or width > spitch:
        return E_INVALID_PITCH
    if width == dpitch == spitch:
        return _copy(dst, src, width * height, kind, stream, bool(sync))
    for row in range(height):
        err = _copy(dst + row * dpitch, src + row * spitch, width, kind, stream, False)
        if err:
            return err
    if sync:
        rt.synchronize_device(before=_synchronizing)
    return SUCCESS


E_INVALID_PITCH = CODES["cudaErrorInvalidPitchValue"]


def _symbol(symbol: int, offset: int, count: int) -> int:
    v = rt.var(symbol)
    if offset + count > v.size:
        raise CudaRuntimeError(ERR_INVALID_VALUE, f"{offset}+{count} bytes lie outside the {v.size}-byte "
                            f"variable {v.name}")
    return v.ptr + offset


@implements(RUNTIME_API, "cudaMemcpyToSymbolAsync")
def memcpy_to_symbol(symbol: int, src: int, count: int, offset: int, kind: int, stream: int,
                     sync: int) -> int:
    if kind not in (H2D, D2D, 4):
        return CODES["cudaErrorInvalidMemcpyDirection"]
    return _copy(_symbol(symbol, offset, count), src, count, kind, stream, bool(sync), checked_dst=True)


@implements(RUNTIME_API, "cudaMemcpyFromSymbolAsync")
def memcpy_from_symbol(dst: int, symbol: int, count: int, offset: int, kind: int, stream: int,
                       sync: int) -> int:
    if kind not in (D2H, D2D, 4):
        return CODES["cudaErrorInvalidMemcpyDirection"]
    return _copy(dst, _symbol(symbol, offset, count), count, kind, stream, bool(sync))


@implements(RUNTIME_API, "cudaGetSymbolAddress")
def get_symbol_address(dev_ptr: int, symbol: int) -> int:
    if not dev_ptr:
        return ERR_INVALID_VALUE
    hostmem.store_u64(dev_ptr, rt.var(symbol).ptr)
    return SUCCESS


@implements(RUNTIME_API, "cudaGetSymbolSize")
def get_symbol_size(size: int, symbol: int) -> int:
    if not size:
        return ERR_INVALID_VALUE
    hostmem.store_u64(size, rt.var(symbol).size)
    return SUCCESS


@implements(RUNTIME_API, "cudaMemsetAsync")
def memset(ptr: int, value: int, count: int, stream: int, sync: int) -> int:
    host = rt.mapped_memory.host_side(ptr) if rt.mapped_memory.ranges else None
    if host is not None:
        rt.settle_host_range(host, count)
        hostmem.write(host, bytes([value & 0xFF]) * count)
        return SUCCESS
    rt.memset(ptr, value, count, stream, bool(sync), before=_synchronizing)
    return SUCCESS


# ------------------------------------------------------------------ streams and events

@implements(RUNTIME_API, "cudaStreamDestroy")
def stream_destroy(stream: int) -> int:
    if stream == streams.PER_THREAD:         # the default streams are not destroyed
        return ERR_INVALID_HANDLE
    server = rt.stream(stream)
    if not server:
        return ERR_INVALID_HANDLE
    rt.destroy_stream(stream, server)
    return SUCCESS


@implements(RUNTIME_API, "cudaStreamSynchronize")
def stream_synchronize(stream: int) -> int:
    rt.synchronize_stream(stream, before=_synchronizing)
    return SUCCESS


@implements(RUNTIME_API, "cudaStreamQuery", guarded=False)
def stream_query(stream: int) -> int:
    try:
        status = rt.query_stream(stream, before=_synchronizing)
        return status if status in (0, ERR_NOT_READY) else rt.fail(status)
    except Exception as exc:
        rt.lost(exc)
        return rt.fail(cuda_error_of(exc))




@implements(RUNTIME_API, "cudaStreamWaitEvent")
def stream_wait_event(stream: int, event: int, flags: int) -> int:
    rt.stream_wait_event(stream, event)
    return SUCCESS


@implements(RUNTIME_API, "cudaEventCreateWithFlags")
def event_create(event: int, flags: int) -> int:
    if not event:
        return ERR_INVALID_VALUE
    hostmem.store_u64(event, rt.create_event(flags))
    return SUCCESS


@implements(RUNTIME_API, "cudaEventRecord")
def event_record(event: int, stream: int) -> int:
    rt.record_event(event, stream)
    return SUCCESS


@implements(RUNTIME_API, "cudaEventSynchronize")
def event_synchronize(event: int) -> int:
    rt.synchronize_event(event, before=_synchronizing)
    return SUCCESS


@implements(RUNTIME_API, "cudaEventQuery", guarded=False)
def event_query(event: int) -> int:
    try:
        status = rt.query_event(event)
        return status if status in (0, ERR_NOT_READY) else rt.fail(status)
    except Exception as exc:
        rt.lost(exc)
        return rt.fail(cuda_error_of(exc))




@implements(RUNTIME_API, "cudaEventElapsedTime")
def event_elapsed_time(ms: int, start: int, end: int) -> int:
    if not ms:
        return ERR_INVALID_VALUE
    hostmem.store_f32(ms, rt.event_elapsed_ms(start, end))
    return SUCCESS


@implements(RUNTIME_API, "cudaEventDestroy")
def event_destroy(event: int) -> int:
    rt.destroy_event(event)
    return SUCCESS


# ------------------------------------------------------------------ launch

@implements(RUNTIME_API, "__cudaPushCallConfiguration", guarded=False)
def push_call_configuration(gxy: int, gz: int, bxy: int, bz: int, shared: int, stream: int) -> int:
    rt.thread.configs.append((gxy, gz, bxy, bz, shared, stream))
    return 0




@implements(RUNTIME_API, "__cudaPopCallConfiguration")
def pop_call_configuration(grid: int, block: int, shared: int, stream: int) -> int:
    configs = rt.thread.configs
    if not configs:
        return ERR_INVALID_CONFIG
    gxy, gz, bxy, bz, shm, s = configs.pop()
    hostmem.store_u64(grid, gxy)
    hostmem.store_u32(grid + 8, gz)
    hostmem.store_u64(block, bxy)
    hostmem.store_u32(block + 8, bz)
    hostmem.store_u64(shared, shm)
    hostmem.store_u64(stream, s)
    return SUCCESS


@implements(RUNTIME_API, "__cudaGetKernel")
def get_kernel(kernel: int, host_fun: int) -> int:
    if not kernel:
        return ERR_INVALID_VALUE
    if host_fun not in rt.kernels:
        return CODES["cudaErrorInvalidDeviceFunction"]
    hostmem.store_u64(kernel, host_fun)    # the kernel handle is the host stub's address
    return SUCCESS


def _check_config(grid: tuple, block: tuple, shared: int) -> None:
    max_threads, max_block, max_grid, max_shared = rt.limits(rt.thread.device)
    bx, by, bz = block
    gx, gy, gz = grid
    if (not 0 < bx * by * bz <= max_threads or not gx * gy * gz
            or bx > max_block[0] or by > max_block[1] or bz > max_block[2]
            or gx > max_grid[0] or gy > max_grid[1] or gz > max_grid[2]):
        raise CudaRuntimeError(ERR_INVALID_CONFIG, f"invalid launch configuration: grid {grid}, block {block}")
    if shared > max_shared:
        raise CudaRuntimeError(ERR_INVALID_VALUE, f"{shared} bytes of dynamic shared memory exceed the "
                            f"device's {max_shared}")


@implements(RUNTIME_API, "cudaLaunchKernel")
def launch_kernel(func: int, gxy: int, gz: int, bxy: int, bz: int, args: int, shared: int,
                  stream: int) -> int:
    k = rt.kernels.get(func)
    if k is None or not k.function or rt.multi_device:
        k = rt.kernel(func)            # an unknown kernel fails here; a new module is loaded
    if not rt.queue_launch(k.function, gxy, gz, bxy, bz, shared, rt.stream(stream), args,
                           k.layout, k.param_size):
        _check_config(_dim(gxy, gz), _dim(bxy, bz), shared)        # raises, saying why
        raise CudaRuntimeError(ERR_INVALID_CONFIG, "invalid launch configuration")
    return SUCCESS


@implements(RUNTIME_API, "cudaLaunchKernelExC")
def launch_kernel_ex(func: int, gxy: int, gz: int, bxy: int, bz: int, args: int, shared: int,
                     stream: int, attrs: int, num_attrs: int) -> int:
    """cudaLaunchKernelExC: the launch attributes are checked first (``launch_attributes``: hints
    are accepted, what cricket cannot honour fails with cudaErrorNotSupported), then the kernel is
    launched, then the events the attributes name are recorded on its stream."""
    events = launch_attributes.check(attrs, num_attrs, "cudaLaunchKernelExC")
    if events.cooperative:              # cricket/client/cooperative.py (which imports this module)
        RUNTIME_API.lookup("cudaLaunchCooperativeKernel").__wrapped__(func, gxy, gz, bxy, bz, args, shared, stream)
    else:
        launch_kernel(func, gxy, gz, bxy, bz, args, shared, stream)
    for event in events:
        rt.record_event(event, stream)
    return SUCCESS


# ------------------------------------------------------------------ functions and occupancy

@implements(RUNTIME_API, "cudaFuncGetAttributes")
def func_get_attributes(values: int, func: int) -> int:
    k = rt.kernel(func)
    a = k.attributes
    cc = rt.compute_capability(rt.thread.device)
    hostmem.store_i64s(values, (a["shared_size_bytes"], a["const_size_bytes"], a["local_size_bytes"],
                                a["max_threads_per_block"], a["num_regs"], a.get("ptx_version") or cc,
                                a.get("binary_version") or cc, _kernel_usage(k).max_dynamic_shared))
    return SUCCESS


_MAX_DYNAMIC_SHARED, _CARVEOUT = 8, 9       # cudaFuncAttribute


@implements(RUNTIME_API, "cudaFuncSetAttribute")
def func_set_attribute(func: int, attribute: int, value: int) -> int:
    """The dynamic shared memory limit (checked against the opt-in limit) and the carve-out are
    remembered: occupancy and cudaFuncGetAttributes report them; the rest are hints."""
    k = rt.kernel(func)
    value = _i32(value)
    if attribute == _MAX_DYNAMIC_SHARED:
        limit = occupancy.max_dynamic_shared(rt.occupancy_limits(rt.thread.device), k.attributes["shared_size_bytes"])
        if not 0 <= value <= limit:
            return ERR_INVALID_VALUE
        k.attributes["max_dynamic_shared_size_bytes"] = value
    elif attribute == _CARVEOUT and not -1 <= value <= 100:
        return ERR_INVALID_VALUE
    return SUCCESS


def _kernel_usage(k: KernelRecord, dev: occupancy.DeviceLimits | None = None) -> occupancy.KernelUsage:
    a = k.attributes
    dynamic = a.get("max_dynamic_shared_size_bytes")
    if dynamic is None:
        dynamic = occupancy.default_max_dynamic_shared(dev or rt.occupancy_limits(rt.thread.device), a["shared_size_bytes"])
    return occupancy.KernelUsage(num_regs=a["num_regs"], shared_size_bytes=a["shared_size_bytes"],
                                 max_threads_per_block=a["max_threads_per_block"], max_dynamic_shared=dynamic)


@implements(RUNTIME_API, "cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags")
def occupancy_max_active_blocks(num_blocks: int, func: int, block_size: int, dynamic_shared: int,
                                flags: int) -> int:
    """Answered from the cached device attributes and the kernel's (no round trip)."""
    if not num_blocks:
        return ERR_INVALID_VALUE
    block_size = _i32(block_size)
    k = rt.kernel(func)
    if block_size <= 0:
        hostmem.store_i32(num_blocks, 0)
        return SUCCESS
    dev = rt.occupancy_limits(rt.thread.device)
    hostmem.store_i32(num_blocks, occupancy.max_active_blocks(dev, _kernel_usage(k, dev), block_size,
                                                              dynamic_shared))
    return SUCCESS
