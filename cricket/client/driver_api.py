"""The Python side of the CUDA driver API: what the libcuda.so.1 replacement forwards.

Path of a call: application (NVIDIA's static or shared cudart, cuda-python, CuPy, ``-lcuda``) →
``libcricket-cuda.so`` (C, ``cext/driver/forward.c``) → ``cricket_drv_call`` of
``cricket._cext.cuda_api`` (holds the GIL) → the function registered here under the driver
function's documented name, with every argument as an ``int`` (pointers are addresses) → its
``CUresult`` back to C. Out-parameters are written here through ``hostmem``.

**One client state per process.** Everything goes through ``cricket.client.runtime.RUNTIME``, the
same object the libcudart shim's calls use: one connection (opened at the first call that needs
it, ``$CRICKET_SERVER`` or an embedded server), one table of device allocations and reserved
device address windows (device addresses never collide with host mappings), one set of pinned
host allocations, streams and events. A stream created through one library is valid in the other.

Modules, libraries, functions and kernels get handles from ``RUNTIME.new_handle()``; a
``CUlibrary`` is a module, and a ``CUkernel`` is the same handle as its ``CUfunction``
(cudart 13 launches with the ``CUkernel`` itself).
"""
from __future__ import annotations

import ctypes
import dataclasses
import logging
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from cricket import _select
from cricket.client import arrays_driver  # noqa: F401  (CUDA arrays, textures, surfaces: registers them)
from cricket.client import context_limits, device_records, library_images, mapped, sass_only
from cricket.client import ipc, managed, mempool, vmm  # noqa: F401  (ipc, vmm: register)
from cricket.client import tensor_maps_driver  # noqa: F401  (cuTensorMapEncodeTiled: registers it)
from cricket.client.library_images import read_image
from cricket.client import cooperative, stream_priorities  # (stream_priorities registers cuStreamGetPriority)
from cricket.client import peers_driver  # noqa: F401  (cuCtxEnablePeerAccess and the other peer calls)
from cricket.client.driver_face import DRIVER_API, DriverApiError, result_of  # noqa: F401
from cricket.client.faces import implements
from cricket.client.runtime import RUNTIME as rt
from cricket.client.runtime import StreamRef
from cricket.cudafacts import device_attributes, occupancy
from cricket.cudafacts.curesult import (INVALID_HANDLE, INVALID_IMAGE, INVALID_VALUE, NOT_FOUND, SUCCESS,
                                        UNSUPPORTED_LIMIT)

hostmem = _select.load("cricket._cext.hostmem", "cricket.client.hostmem")

log = logging.getLogger(__name__)

# No name in cuda.h: the value NVIDIA's driver gives cudart for an invalid launch configuration
# (cudart passes it on unchanged as cudaErrorInvalidConfiguration; see launch_kernel)
INVALID_CONFIGURATION = 9

DEVICE_ATTRIBUTE_MAX = device_attributes.MAX     # devices.c rejects larger
MEMORYTYPE_HOST, MEMORYTYPE_DEVICE = 1, 2

IMPLEMENTATIONS: dict[str, Callable[..., int]] = DRIVER_API.implementations


# ------------------------------------------------------------------ records

@dataclass
class FunctionRecord:
    server: int
    name: str
    module: int
    layout: tuple = ()
    param_size: int = 0
    attributes: dict[int, int] = field(default_factory=dict)
    session: int = 0                   # the value of _session when `server` was obtained
    kernel: bool = False               # obtained as a CUkernel (cuLibraryGetKernel), as cudart does
    device: int = 0                    # the device `server` is on; on another: `on_devices` (_function)
    on_devices: dict[int, FunctionRecord] = field(default_factory=dict)


@dataclass
class ModuleRecord:
    server: int
    image: bytes                       # kept: a forked child loads it again into its own session
    kind: int
    functions: dict[str, int] = field(default_factory=dict)
    session: int = 0
    device: int = 0                    # the device `server` is on; on another: `on_devices` (_module)
    on_devices: dict[int, ModuleRecord] = field(default_factory=dict)


modules: dict[int, ModuleRecord] = {}
functions: dict[int, FunctionRecord] = {}
jit_links: dict[int, Any] = {}     # CUlinkState handle -> its state
# Incremented in a forked child: server handles obtained before belong to the parent's session.
# Module and function handles stay valid (cudart keeps its CUlibrary/CUkernel across fork); their
# server objects are re-created at the first use.
_session = 0


def _module(handle: int) -> ModuleRecord:
    m = modules.get(handle)
    if m is None:
        raise DriverApiError(INVALID_HANDLE, f"module or library {handle:#x} does not exist")
    if m.session != _session:
        m.server = rt.conn.load_image(m.image, m.kind)[0]
        m.session = _session
    if rt.multi_device and rt.thread.device != m.device:
        # A library (which cricket does not tell from a module) is loaded in each device it is used on.
        on = m.on_devices.get(rt.thread.device)
        if on is None or on.session != _session:
            on = m.on_devices[rt.thread.device] = dataclasses.replace(
                m, server=rt.conn.load_image(m.image, m.kind)[0], session=_session, device=rt.thread.device,
                functions={}, on_devices={})
        return on
    return m


def _resolve(f: FunctionRecord) -> None:
    from cricket.protocol import gen as P
    m = _module(f.module)
    conn = rt.conn
    res = conn._stub.CR_MODULE_GET_FUNCTION(P.cr_get_args(module=m.server, name=f.name))
    conn._check(res, f"cuModuleGetFunction({f.name})")
    fn = res.function
    layout = tuple((p.offset, p.size) for p in fn.params)
    for off, size in layout:
        if off + size > fn.param_size:
            raise DriverApiError(INVALID_IMAGE, f"kernel {f.name}: parameter at {off}+{size} lies "
                                 f"past its {fn.param_size}-byte parameter buffer")
    f.server, f.layout, f.param_size, f.session = fn.handle, layout, fn.param_size, _session
    f.attributes.update({0: fn.max_threads_per_block, 1: fn.shared_size_bytes,
                         2: fn.const_size_bytes, 3: fn.local_size_bytes, 4: fn.num_regs})
    # PTX_VERSION, BINARY_VERSION as the server ran them (the emu backend runs PTX of any target;
    # CUB's host code picks its tuning policy by the PTX version); 0: unknown, the device's is used
    f.attributes.update({k: v for k, v in ((5, fn.ptx_version), (6, fn.binary_version)) if v})


def _function(handle: int) -> FunctionRecord:
    f = functions.get(handle)
    if f is None:
        raise DriverApiError(INVALID_HANDLE, f"function or kernel {handle:#x} does not exist")
    if f.session != _session:
        _resolve(f)
    if rt.multi_device and rt.thread.device != f.device:
        # A CUkernel launches in the current device: its function there (the module loaded there).
        on = f.on_devices.get(rt.thread.device)
        if on is None or on.session != _session:
            on = f.on_devices[rt.thread.device] = dataclasses.replace(
                f, attributes=dict(f.attributes), device=rt.thread.device, on_devices={})
            _resolve(on)
        return on
    return f


def _out(ptr: int) -> int:
    if not ptr:
        raise DriverApiError(INVALID_VALUE, "an output pointer is NULL")
    return ptr


def _c_string(ptr: int) -> str:
    if not ptr:
        raise DriverApiError(INVALID_VALUE, "a name is NULL")
    return ctypes.string_at(ptr).decode()


# ------------------------------------------------------------------ device snapshot

@implements(DRIVER_API, "cricketDeviceSnapshot")
def device_snapshot(buf: int, size: int) -> int:
    """The server's HELLO snapshot in the CRICKET_DRIVER_DEVICES text format (devices.c): the
    devices CUDA_VISIBLE_DEVICES shows (none: cuInit answers CUDA_ERROR_NO_DEVICE)."""
    conn = rt.connection()
    lines = []
    if conn.driver_version > 0:
        lines.append(f"driver_version {conn.driver_version}")
    for d in conn.devices[:16]:
        lines += ["device", f"name {d.name[:255] or 'cricket device'}"]
        if len(d.uuid) == 16:
            lines.append(f"uuid {d.uuid.hex()}")
        if d.total_memory > 0:
            lines.append(f"total_mem {d.total_memory}")
        lines += [f"attr {a} {v}" for a, v in sorted(d.attributes.items())
                  if 0 < a < DEVICE_ATTRIBUTE_MAX and -(1 << 31) <= v < (1 << 31)]
    text = ("\n".join(lines) + "\n").encode()
    if len(text) > size:
        raise DriverApiError(INVALID_VALUE, f"the device snapshot needs {len(text)} bytes, "
                             f"the library gave {size}")
    hostmem.write(buf, text + b"\0")
    log.info("device snapshot from %s: %d device(s)", conn.server, len(conn.devices))
    return SUCCESS


@implements(DRIVER_API, "cricketSetDevice")
def set_current_device(device: int) -> int:
    """The calling thread's current context is on ``device`` (forward.c tells when it changes)."""
    rt.set_device(device)
    return SUCCESS


# ------------------------------------------------------------------ created contexts

class _CurrentContext(threading.local):
    """The id of the calling thread's current context (0: a primary one), as forward.c tells it."""
    id = 0


_current_context = _CurrentContext()


@dataclass
class ContextResources:
    """What was made while a created context was current: freed when it is destroyed."""
    allocations: set[int] = field(default_factory=set)
    modules: set[int] = field(default_factory=set)
    streams: set[int] = field(default_factory=set)
    events: set[int] = field(default_factory=set)
    links: set[int] = field(default_factory=set)


# context id -> its resources (primary contexts' are not filed: they live as long as the process)
context_resources: dict[int, ContextResources] = {}


def _file(kind: str, handle: int) -> None:
    """Files ``handle`` under the calling thread's current created context, if any."""
    if _current_context.id:
        getattr(context_resources.setdefault(_current_context.id, ContextResources()), kind).add(handle)


def _unfile(kind: str, handle: int) -> None:
    for res in list(context_resources.values()):     # a snapshot: other threads may add contexts
        getattr(res, kind).discard(handle)


@implements(DRIVER_API, "cricketSetContext")
def set_current_context(context: int) -> int:
    """The calling thread's current context is ``context`` (forward.c tells when it changes)."""
    _current_context.id = context
    return SUCCESS


@implements(DRIVER_API, "cricketContextDestroy")
def context_destroy(context: int) -> int:
    """cuCtxDestroy: the context's memory, modules, streams, events and link states are freed, as
    NVIDIA's driver frees them with the context (contexts.c has popped it already)."""
    res = context_resources.pop(context, None)
    if res is None:
        return SUCCESS
    rt.drain()
    for link in res.links:
        jit_links.pop(link, None)
    for kind, release in (("streams", stream_destroy), ("events", event_destroy),
                          ("modules", module_unload), ("allocations", mem_free)):
        for handle in getattr(res, kind):
            try:
                release(handle)
            except Exception as exc:       # the rest is freed all the same
                log.warning("cuCtxDestroy: freeing %s %#x failed: %s", kind[:-1], handle, exc)
    log.debug("context %d destroyed: %d allocation(s), %d module(s) freed", context,
              len(res.allocations), len(res.modules))
    return SUCCESS


@implements(DRIVER_API, "cricketSetSchedule")
def set_schedule(schedule: int) -> int:
    """A primary context's CU_CTX_SCHED_* flag (contexts.c checked it): how the process waits."""
    rt.set_schedule(schedule)
    return SUCCESS


# ------------------------------------------------------------------ memory

@implements(DRIVER_API, "cuMemAlloc")
def mem_alloc(dptr: int, size: int) -> int:
    """An allocation of the current context (freed by cuCtxDestroy when that is a created one)."""
    err = mem_alloc_async(dptr, size)
    if err == SUCCESS and _current_context.id:
        _file("allocations", hostmem.load_u64(dptr))
    return err


def mem_alloc_async(dptr: int, size: int) -> int:
    """An ordinary allocation on the server (cuMemAllocAsync: ``mempool``)."""
    _out(dptr)
    if size == 0:
        return INVALID_VALUE
    conn = rt.conn
    res = conn._check(conn._stub.CR_MEM_ALLOC(size), "cuMemAlloc")
    rt.add_allocation(res.ptr, size)
    hostmem.store_u64(dptr, res.ptr)
    return SUCCESS


@implements(DRIVER_API, "cuMemFree")
def mem_free(ptr: int, stream: int = 0) -> int:
    if ptr == 0:
        # cudaFree(0) "performs no operation" (runtime API docs) and static cudart 13 passes the 0
        # on to cuMemFree_v2 (traced): NVIDIA's driver accepts it
        return SUCCESS
    if managed.owns(ptr):
        managed.free(ptr)
        return SUCCESS
    if ptr not in rt.allocations or (rt.mapped_memory.ranges and rt.mapped_memory.find(ptr)):
        return INVALID_VALUE            # mapped memory's device copy goes with its host memory
    rt.drain()
    mempool.forget_block(ptr)           # a block of a memory pool leaves its pool
    if not rt.free_allocation(ptr):
        return INVALID_VALUE            # another thread freed it meanwhile
    _unfile("allocations", ptr)
    return SUCCESS


@implements(DRIVER_API, "cuMemGetInfo")
def mem_get_info(free: int, total: int) -> int:
    rt.store_mem_info(free, total)
    return SUCCESS


@implements(DRIVER_API, "cuCtxGetLimit")
def ctx_get_limit(pvalue: int, limit: int) -> int:
    current = context_limits.get_limit(limit)
    if current is None:
        return UNSUPPORTED_LIMIT
    if not pvalue:
        return INVALID_VALUE
    hostmem.store_u64(pvalue, current)
    return SUCCESS


@implements(DRIVER_API, "cuCtxSetLimit")
def ctx_set_limit(limit: int, value: int) -> int:
    if context_limits.get_limit(limit) is None:
        return UNSUPPORTED_LIMIT
    return SUCCESS if context_limits.set_limit(rt, limit, value) else INVALID_VALUE


@implements(DRIVER_API, "cuMemHostAlloc")
def mem_host_alloc(pp: int, size: int, flags: int) -> int:
    """Pinned host memory is local memory the client knows (copies from it may be deferred);
    CU_MEMHOSTALLOC_DEVICEMAP memory gets a device copy (``cricket.client.mapped``)."""
    _out(pp)
    if flags & ~mapped.ALLOC_FLAGS:
        return INVALID_VALUE
    hostmem.store_u64(pp, rt.mapped_memory.host_alloc(size, flags))
    return SUCCESS


@implements(DRIVER_API, "cuMemFreeHost")
def mem_free_host(ptr: int) -> int:
    rt.drain()                      # as the driver's: no copy still lands in the memory once it is freed
    rt.mapped_memory.host_free(ptr)
    return SUCCESS


def _pinned_range(ptr: int) -> tuple[int, int] | None:
    for table in (rt.host_allocs, rt.host_registered):
        for base, size in table.items():
            if base <= ptr < base + max(size, 1):
                return base, size
    return None


@implements(DRIVER_API, "cuMemHostGetDevicePointer")
def mem_host_get_device_pointer(pdptr: int, p: int, flags: int) -> int:
    _out(pdptr)
    address = rt.mapped_memory.device_pointer(p) if flags == 0 else None
    if address is None:
        return INVALID_VALUE
    hostmem.store_u64(pdptr, address)
    return SUCCESS


@implements(DRIVER_API, "cuMemHostGetFlags")
def mem_host_get_flags(pflags: int, p: int) -> int:
    _out(pflags)
    value = rt.mapped_memory.host_flags(p)
    if value is None:
        return INVALID_VALUE
    hostmem.store_u32(pflags, value)
    return SUCCESS


@implements(DRIVER_API, "cuMemGetAddressRange")
def mem_get_address_range(pbase: int, psize: int, dptr: int) -> int:
    found = rt.allocation_table.allocation_at(dptr)
    if found is None:
        return NOT_FOUND
    if pbase:
        hostmem.store_u64(pbase, found[0])
    if psize:
        hostmem.store_u64(psize, found[1])
    return SUCCESS


@implements(DRIVER_API, "cricketPointerInfo")
def pointer_info(ptr: int, out: int) -> int:
    """(kind, range start, range size, device, buffer id, created context id or 0, device pointer,
    host pointer, mapped: 2 for managed memory) of an address, for forward.c."""
    found = rt.mapped_memory.find(ptr) if rt.mapped_memory.ranges else None
    if found is not None:
        r, offset = found
        managed_range = r.snapshot is not None          # managed.py's: device memory, reachable from both
        hostmem.store_i64s(out, (MEMORYTYPE_DEVICE if managed_range else MEMORYTYPE_HOST, r.host, r.size,
                                 rt.thread.device, r.host, 0, r.device + offset, r.host + offset,
                                 2 if managed_range else 1))
        return SUCCESS
    found = rt.allocation_table.allocation_at(ptr)
    if found is not None:
        context = next((c for c, res in list(context_resources.items()) if found[0] in res.allocations), 0)
        hostmem.store_i64s(out, (MEMORYTYPE_DEVICE, found[0], found[1], device_records.device_of(rt, found[0]),
                                 found[0], context,
                                 ptr, 0, 1))
        return SUCCESS
    if rt.is_device(ptr):               # a module global, inside a reserved device window
        hostmem.store_i64s(out, (MEMORYTYPE_DEVICE, ptr, 0, rt.thread.device, ptr, 0, ptr, 0, 1))
        return SUCCESS
    pinned = _pinned_range(ptr)
    if pinned is not None:
        hostmem.store_i64s(out, (MEMORYTYPE_HOST, pinned[0], pinned[1], rt.thread.device, pinned[0], 0,
                                 0, ptr, 0))
        return SUCCESS
    hostmem.store_i64s(out, (0, 0, 0, 0, 0, 0, 0, 0, 0))
    return SUCCESS


# ------------------------------------------------------------------ copies and memsets

_Stream = StreamRef


H2H, H2D, D2H, D2D = 0, 1, 2, 3


def _copy(kind: int, dst: int, src: int, count: int, stream_handle: int, is_async: int) -> int:
    if count == 0:
        return SUCCESS
    stream = rt.stream(stream_handle)
    sync = not is_async
    if rt.mapped_memory.ranges:
        dst, src, kind = rt.mapped_memory.resolve_copy(dst, src, kind)
    if sync:
        rt.drain()
    if kind == H2H:
        if not sync:
            rt.settle_host_range(src, count)
            rt.settle_host_range(dst, count)
        hostmem.write(dst, hostmem.view(src, count))
    elif kind == H2D:
        # The bytes are taken now. A synchronous copy from pageable memory returns once the source
        # may be reused, as CUDA's does (its errors come from the next synchronising call), when
        # the destination is a known allocation; from pinned memory it waits for the copy.
        if sync and _pinned_range(src) is None and rt.in_allocation(dst, count):
            sync = False
        rt.htod(dst, src, count, stream, sync)
    elif kind == D2H:
        if sync or _pinned_range(dst) is None:    # pageable destination: synchronous, as in CUDA
            if rt.drain_is_idle():                # nothing to complete first: one step
                rt.dtoh(dst, src, count, stream)
            else:
                started = rt.dtoh_start(dst, src, count, stream)
                rt.drain()
                rt.dtoh_finish(started)
        else:
            rt.defer_dtoh(rt.dtoh_start(dst, src, count, stream), dst, count)
    else:
        rt.dtod(dst, src, count, stream, sync)
    if not is_async:
        rt.synchronized()               # a blocking copy synchronises: kernels' mapped writes come back
    return SUCCESS


@implements(DRIVER_API, "cuMemcpyHtoD")
def memcpy_htod(dst: int, src: int, count: int, stream: int, is_async: int) -> int:
    return _copy(H2D, dst, src, count, stream, is_async)


@implements(DRIVER_API, "cuMemcpyDtoH")
def memcpy_dtoh(dst: int, src: int, count: int, stream: int, is_async: int) -> int:
    return _copy(D2H, dst, src, count, stream, is_async)


@implements(DRIVER_API, "cuMemcpyDtoD")
def memcpy_dtod(dst: int, src: int, count: int, stream: int, is_async: int) -> int:
    return _copy(D2D, dst, src, count, stream, is_async)


@implements(DRIVER_API, "cuMemcpy")
def memcpy(dst: int, src: int, count: int, stream: int, is_async: int) -> int:
    """Unified addressing: the direction comes from where the two addresses lie."""
    return _copy(rt.kind_of(dst, src, 4), dst, src, count, stream, is_async)


@implements(DRIVER_API, "cuMemset")
def memset(dst: int, value: int, count: int, element_size: int, stream: int, is_async: int) -> int:
    host = rt.mapped_memory.host_side(dst) if rt.mapped_memory.ranges else None
    if host is not None and count:
        rt.settle_host_range(host, count * element_size)
        pattern = (value & ((1 << (8 * element_size)) - 1)).to_bytes(element_size, "little")
        hostmem.write(host, pattern * count)
        return SUCCESS
    rt.memset(dst, value, count, stream, not is_async, element_size)
    return SUCCESS


# ------------------------------------------------------------------ modules and libraries

@implements(DRIVER_API, "cuModuleLoadData")
def module_load_data(pmodule: int, image: int) -> int:
    _out(pmodule)
    data, kind = read_image(image)
    server = rt.load_image(data, kind)
    handle = rt.new_handle()
    modules[handle] = ModuleRecord(server, data, kind, session=_session, device=rt.thread.device)
    _file("modules", handle)
    sass_only.module_loaded(rt.conn.backend, handle, data, kind, image)
    hostmem.store_u64(pmodule, handle)
    return SUCCESS


@implements(DRIVER_API, "cuModuleUnload")
def module_unload(handle: int) -> int:
    m = modules.get(handle)
    if m is None:
        return INVALID_HANDLE
    rt.drain()
    for loaded in (m, *m.on_devices.values()):
        if loaded.session == _session:  # else it was loaded by the parent's session only
            rt.conn._check(rt.conn._stub.CR_MODULE_UNLOAD(loaded.server), "cuModuleUnload")
    del modules[handle]
    _unfile("modules", handle)
    for fh in m.functions.values():
        functions.pop(fh, None)
    return SUCCESS


@implements(DRIVER_API, "cuLibraryGetModule")
def library_get_module(pmod: int, library: int) -> int:
    _module(library)
    hostmem.store_u64(_out(pmod), library)    # a library is its module
    return SUCCESS


@implements(DRIVER_API, "cuModuleGetFunction")
def module_get_function(pfunc: int, module: int, name_ptr: int) -> int:
    _out(pfunc)
    m = _module(module)
    name = _c_string(name_ptr)
    handle = m.functions.get(name)
    if handle is None:
        f = FunctionRecord(0, name, module, session=-1, device=m.device)
        _resolve(f)
        handle = rt.new_handle()
        functions[handle] = f
        m.functions[name] = handle
    hostmem.store_u64(pfunc, handle)
    return SUCCESS


@implements(DRIVER_API, "cuLibraryGetKernel")
def library_get_kernel(pkernel: int, library: int, name_ptr: int) -> int:
    module_get_function(pkernel, library, name_ptr)
    functions[hostmem.load_u64(pkernel)].kernel = True
    return SUCCESS


@implements(DRIVER_API, "cuLibraryLoadFromFile")
def library_load_from_file(plibrary: int, file_name: int) -> int:
    try:
        buffer = library_images.read_library_file(_c_string(file_name).encode(errors="surrogateescape"))
    except (OSError, ValueError) as exc:
        raise DriverApiError(INVALID_VALUE, f"cuLibraryLoadFromFile: {exc}") from None
    return module_load_data(plibrary, ctypes.addressof(buffer))


@implements(DRIVER_API, "cuLibraryGetKernelCount")
def library_get_kernel_count(count: int, library: int) -> int:
    m = _module(library)
    hostmem.store_u32(_out(count), len(library_images.kernel_names(m.image, m.kind)))
    return SUCCESS


@implements(DRIVER_API, "cuLibraryEnumerateKernels")
def library_enumerate_kernels(kernels: int, count: int, library: int) -> int:
    m = _module(library)
    names = library_images.kernel_names(m.image, m.kind)
    if not kernels or not 0 < count <= len(names):
        return INVALID_VALUE
    for i, name in enumerate(names[:count]):
        library_get_kernel(kernels + 8 * i, library, library_images.c_name(name))
    return SUCCESS


@implements(DRIVER_API, "cuFuncGetName")
def func_get_name(name: int, func: int) -> int:
    """cuFuncGetName and cuKernelGetName: the kernel's (mangled) name."""
    hostmem.store_u64(_out(name), library_images.c_name(_function(func).name))
    return SUCCESS


@implements(DRIVER_API, "cuKernelGetFunction")
def kernel_get_function(pfunc: int, kernel: int) -> int:
    _function(kernel)
    hostmem.store_u64(_out(pfunc), kernel)    # the CUkernel is launchable as it is
    return SUCCESS


@implements(DRIVER_API, "cuModuleGetGlobal")
def module_get_global(dptr: int, size_ptr: int, module: int, name_ptr: int) -> int:
    library_images.store_global(_module(module).server, _c_string(name_ptr), dptr, size_ptr, "cuModuleGetGlobal")
    return SUCCESS


@implements(DRIVER_API, "cuLibraryGetManaged")
def library_get_managed(dptr: int, size_ptr: int, library: int, name_ptr: int) -> int:
    """A __managed__ variable of a library, with host pages at its address (cricket.client.managed)."""
    ptr, size = managed.place_library_variable(_module(library).server, _c_string(name_ptr))
    if dptr:
        hostmem.store_u64(dptr, ptr)
    if size_ptr:
        hostmem.store_u64(size_ptr, size)
    return SUCCESS


# ------------------------------------------------------------------ JIT linking

def _jit() -> Any:
    """cricket.client.jit_link, imported at the first cuLink* call: it needs cricket.fatbin
    (pyelftools), which programs that never link should not load."""
    from cricket.client import jit_link
    return jit_link


def _link(handle: int) -> Any:
    state = jit_links.get(handle)
    if state is None:
        raise DriverApiError(INVALID_HANDLE, f"link state {handle:#x} does not exist")
    return state


@implements(DRIVER_API, "cuLinkCreate")
def link_create(count: int, options: int, values: int, pstate: int) -> int:
    _out(pstate)
    state = _jit().LinkState.create(_jit().read_options(count, options, values, "cuLinkCreate"),
                                      rt.compute_capability(rt.thread.device))
    handle = rt.new_handle()
    jit_links[handle] = state
    _file("links", handle)
    hostmem.store_u64(pstate, handle)
    return SUCCESS


@implements(DRIVER_API, "cuLinkAddData")
def link_add_data(handle: int, input_type: int, data: int, size: int, name: int, count: int, options: int,
                  values: int) -> int:
    state = _link(handle)
    if not data or not size or size > _jit().MAX_INPUT:
        return INVALID_VALUE
    label = ctypes.string_at(name).decode(errors="replace") if name else ""
    state.add(input_type, hostmem.read(data, size), None, label,
              _jit().read_options(count, options, values, "cuLinkAddData"), "cuLinkAddData")
    return SUCCESS


@implements(DRIVER_API, "cuLinkAddFile")
def link_add_file(handle: int, input_type: int, path: int, count: int, options: int, values: int) -> int:
    state = _link(handle)
    name = _c_string(path)
    state.add(input_type, None, name, name, _jit().read_options(count, options, values, "cuLinkAddFile"),
              "cuLinkAddFile")
    return SUCCESS


@implements(DRIVER_API, "cuLinkComplete")
def link_complete(handle: int, pimage: int, psize: int) -> int:
    _out(pimage)
    address, size = _link(handle).complete()
    hostmem.store_u64(pimage, address)
    if psize:
        hostmem.store_u64(psize, size)
    return SUCCESS


@implements(DRIVER_API, "cuLinkDestroy")
def link_destroy(handle: int) -> int:
    if jit_links.pop(handle, None) is None:
        return INVALID_HANDLE
    _unfile("links", handle)
    return SUCCESS


# ------------------------------------------------------------------ functions and launches

_DYNAMIC_SHARED = 8          # CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
# cuFuncSetCacheConfig and cuFuncSetSharedMemConfig (forward.c) as pseudo-attributes: hints whose
# value must be a CUfunc_cache (4 values) or a CUsharedconfig (3)
_SET_CACHE_CONFIG, _SET_SHARED_MEM_CONFIG = (1 << 64) - 1, (1 << 64) - 2
_CONFIG_VALUES = {_SET_CACHE_CONFIG: range(4), _SET_SHARED_MEM_CONFIG: range(3)}


@implements(DRIVER_API, "cuFuncGetAttribute")
def func_get_attribute(pi: int, attribute: int, func: int) -> int:
    _out(pi)
    f = _function(func)
    cc = rt.compute_capability(rt.thread.device)
    if attribute in f.attributes:
        value = f.attributes[attribute]
    elif attribute in (5, 6):                  # PTX_VERSION, BINARY_VERSION
        value = cc
    elif attribute == _DYNAMIC_SHARED:
        value = occupancy.default_max_dynamic_shared(rt.occupancy_limits(rt.thread.device), f.attributes.get(1, 0))
    elif 7 <= attribute <= 15:                 # cache mode, carve-out, cluster attributes
        value = 0
    else:
        return INVALID_VALUE
    hostmem.store_i32(pi, value)
    return SUCCESS


@implements(DRIVER_API, "cuFuncSetAttribute")
def func_set_attribute(func: int, attribute: int, value: int) -> int:
    """Hints the server's launch does not take are accepted; the dynamic shared memory limit and
    the carve-out are remembered so that cuFuncGetAttribute reports them."""
    f = _function(func)
    if attribute in _CONFIG_VALUES:
        return SUCCESS if value in _CONFIG_VALUES[attribute] else INVALID_VALUE
    if attribute == _DYNAMIC_SHARED:
        if not 0 <= value <= occupancy.max_dynamic_shared(rt.occupancy_limits(rt.thread.device), f.attributes.get(1, 0)):
            return INVALID_VALUE
    if attribute in (_DYNAMIC_SHARED, 9):
        f.attributes[attribute] = value
        return SUCCESS
    return SUCCESS if 7 <= attribute <= 15 else INVALID_VALUE


def _extra_params(extra: int, f: FunctionRecord) -> bytes:
    """The parameter buffer of an ``extra`` array (CU_LAUNCH_PARAM_BUFFER_POINTER/SIZE)."""
    buf = size = None
    for i in range(0, 64, 2):
        key = hostmem.load_u64(extra + 8 * i)
        if key == 0:                                   # CU_LAUNCH_PARAM_END
            break
        value = hostmem.load_u64(extra + 8 * (i + 1))
        if key == 1:
            buf = value
        elif key == 2:
            size = hostmem.load_u64(value) if value else None
        else:
            raise DriverApiError(INVALID_VALUE, f"unknown key {key:#x} in the launch's extra array")
    if buf is None or size is None:
        raise DriverApiError(INVALID_VALUE, "the launch's extra array needs CU_LAUNCH_PARAM_BUFFER_POINTER "
                             "and CU_LAUNCH_PARAM_BUFFER_SIZE")
    if size < f.param_size:
        raise DriverApiError(INVALID_VALUE, f"{f.name} takes {f.param_size} bytes of parameters, "
                             f"the extra buffer holds {size}")
    return hostmem.read(buf, f.param_size)


def _launch_refused(f: FunctionRecord, gx: int, gy: int, gz: int, bx: int, by: int, bz: int,
                    shared: int) -> int:
    """The CUresult for a configuration outside the calling thread's device limits, else 0."""
    max_threads, max_block, max_grid, max_shared = rt.limits(rt.thread.device)
    if (not 0 < bx * by * bz <= max_threads or not gx * gy * gz
            or bx > max_block[0] or by > max_block[1] or bz > max_block[2]
            or gx > max_grid[0] or gy > max_grid[1] or gz > max_grid[2]):
        # NVIDIA's driver: CUDA_ERROR_INVALID_VALUE for a CUfunction (numba#1055; lupine#439, probed
        # on driver 590.48.01). cudart launches a CUkernel, passes the driver's code on unchanged
        # (measured for every CUresult with static cudart 13.0) and makes no other driver call
        # first (traced), yet reports cudaErrorInvalidConfiguration (runtime API docs; the
        # compute-sanitizer trace in NVIDIA/cccl#1894 places the error inside libcuda.so.1): the
        # driver answers a CUkernel launch with 9.
        return INVALID_CONFIGURATION if f.kernel else INVALID_VALUE
    if shared > max_shared:
        # too much dynamic shared memory: CUDA_ERROR_INVALID_VALUE from the driver (cupy#2118,
        # numba-cuda-mlir#148) and cudaErrorInvalidValue from the runtime (punica#20, HVM1#293)
        return INVALID_VALUE
    return 0


@implements(DRIVER_API, "cuLaunchKernel")
def launch_kernel(func: int, gx: int, gy: int, gz: int, bx: int, by: int, bz: int, shared: int,
                  stream: int, params: int, extra: int) -> int:
    f = _function(func)
    if f.module in sass_only.refused_modules:      # no PTX on a PTX-only backend: fail now
        sass_only.check_module_launch(f.module, f.name)
    if params and not extra and (f.layout or not f.param_size):
        # The hot path, shared with the runtime API: hostmem.launch_call checks the configuration
        # against the same limits; only a refused launch asks which error it is.
        if rt.queue_launch(f.server, gx | gy << 32, gz, bx | by << 32, bz, shared,
                           rt.stream(stream), params, f.layout, f.param_size):
            return SUCCESS
        return _launch_refused(f, gx, gy, gz, bx, by, bz, shared) or INVALID_VALUE
    refused = _launch_refused(f, gx, gy, gz, bx, by, bz, shared)
    if refused:
        return refused
    if params and extra:
        return INVALID_VALUE
    if params:
        data = hostmem.pack_params(params, f.layout, f.param_size) if f.layout else b""
    elif extra:
        data = _extra_params(extra, f)
    elif f.param_size:
        return INVALID_VALUE
    else:
        data = b""
    from cricket.protocol import gen as P
    if rt.mapped_memory.ranges:              # the host's writes to mapped memory go first
        rt.mapped_memory.before_launch(rt.stream(stream))
    rt.conn._stub.CR_LAUNCH_ASYNC_batched(P.cr_launch_args(
        function=f.server, grid=P.cr_dim3(x=gx, y=gy, z=gz), block=P.cr_dim3(x=bx, y=by, z=bz),
        shared_mem=shared, stream=rt.stream(stream), params=data))
    rt.stats.launches += 1
    return SUCCESS


@implements(DRIVER_API, "cuLaunchCooperativeKernel")
def launch_cooperative_kernel(func: int, gx: int, gy: int, gz: int, bx: int, by: int, bz: int, shared: int,
                              stream: int, params: int) -> int:
    """Every block resident at once (``cricket.client.cooperative``); parameters as kernelParams only."""
    f = _function(func)
    refused = _launch_refused(f, gx, gy, gz, bx, by, bz, shared)
    if refused or (f.param_size and not params):
        return refused or INVALID_VALUE
    cooperative.queue(f.server, f.layout, f.param_size, _kernel_usage(f, rt.occupancy_limits(rt.thread.device)),
                      (gx, gy, gz), (bx, by, bz), shared, rt.stream(stream), params)
    return SUCCESS


@implements(DRIVER_API, "cuLaunchKernelEx")
def launch_kernel_ex(func: int, gx: int, gy: int, gz: int, bx: int, by: int, bz: int, shared: int,
                     stream: int, params: int, extra: int, attrs: int, num_attrs: int) -> int:
    """Launch attributes: the runtime shim's policy (``cricket.client.launch_attributes``)."""
    from cricket.client import launch_attributes
    events = launch_attributes.check(attrs, num_attrs, "cuLaunchKernelEx")
    if events.cooperative:
        result = launch_cooperative_kernel(func, gx, gy, gz, bx, by, bz, shared, stream, params)
    else:
        result = launch_kernel(func, gx, gy, gz, bx, by, bz, shared, stream, params, extra)
    for event in events if result == SUCCESS else ():
        rt.record_event(event, stream)
    return result


@implements(DRIVER_API, "cuOccupancyMaxActiveBlocksPerMultiprocessor")
def occupancy_max_active_blocks(num_blocks: int, func: int, block_size: int, dynamic_shared: int) -> int:
    """The calculator of cricket.cudafacts.occupancy, as the runtime face's."""
    _out(num_blocks)
    f = _function(func)
    if block_size <= 0:
        return INVALID_VALUE
    dev = rt.occupancy_limits(rt.thread.device)
    hostmem.store_i32(num_blocks, occupancy.max_active_blocks(dev, _kernel_usage(f, dev), block_size,
                                                              dynamic_shared))
    return SUCCESS


def _kernel_usage(f: FunctionRecord, dev: occupancy.DeviceLimits) -> occupancy.KernelUsage:
    a = f.attributes
    static = a.get(1, 0)
    dynamic = a.get(_DYNAMIC_SHARED)
    if dynamic is None:
        dynamic = occupancy.default_max_dynamic_shared(dev, static)
    return occupancy.KernelUsage(num_regs=a.get(4, 0), shared_size_bytes=static,
                                 max_threads_per_block=a.get(0) or dev.max_threads_per_block,
                                 max_dynamic_shared=dynamic)


# ------------------------------------------------------------------ streams, events, synchronisation

@implements(DRIVER_API, "cuStreamCreate")
def stream_create(pstream: int, flags: int, priority: int = 0) -> int:
    """cuStreamCreate and cuStreamCreateWithPriority."""
    _out(pstream)
    stream = rt.create_stream(flags)
    stream_priorities.record(stream, priority)
    _file("streams", stream)
    hostmem.store_u64(pstream, stream)
    return SUCCESS


@implements(DRIVER_API, "cuStreamDestroy")
def stream_destroy(stream: int) -> int:
    server = rt.streams.get(stream)
    if not server:
        return INVALID_HANDLE
    rt.destroy_stream(stream, server)
    _unfile("streams", stream)
    return SUCCESS


@implements(DRIVER_API, "cuStreamSynchronize")
def stream_synchronize(stream: int) -> int:
    rt.synchronize_stream(stream)
    return SUCCESS


@implements(DRIVER_API, "cuStreamQuery")
def stream_query(stream: int) -> int:
    return rt.query_stream(stream)


@implements(DRIVER_API, "cuStreamWaitEvent")
def stream_wait_event(stream: int, event: int) -> int:
    rt.stream_wait_event(stream, event)
    return SUCCESS


@implements(DRIVER_API, "cuEventCreate")
def event_create(pevent: int, flags: int) -> int:
    _out(pevent)
    event = rt.create_event(flags)
    _file("events", event)
    hostmem.store_u64(pevent, event)
    return SUCCESS


@implements(DRIVER_API, "cuEventRecord")
def event_record(event: int, stream: int) -> int:
    rt.record_event(event, stream)
    return SUCCESS


@implements(DRIVER_API, "cuEventSynchronize")
def event_synchronize(event: int) -> int:
    rt.synchronize_event(event)
    return SUCCESS


@implements(DRIVER_API, "cuEventQuery")
def event_query(event: int) -> int:
    return rt.query_event(event)


@implements(DRIVER_API, "cuEventElapsedTime")
def event_elapsed_time(ms: int, start: int, end: int) -> int:
    _out(ms)
    hostmem.store_f32(ms, rt.event_elapsed_ms(start, end))
    return SUCCESS


@implements(DRIVER_API, "cuEventDestroy")
def event_destroy(event: int) -> int:
    rt.destroy_event(event)
    _unfile("events", event)
    return SUCCESS


@implements(DRIVER_API, "cuCtxSynchronize")
def ctx_synchronize() -> int:
    rt.synchronize_device()
    return SUCCESS


def _forked() -> None:
    """A forked child opens its own session (RUNTIME does the same): modules and functions are
    loaded and looked up again there at their first use."""
    global _session
    _session += 1


os.register_at_fork(after_in_child=_forked)


@implements(DRIVER_API, "cuDevicePrimaryCtxReset")
def primary_ctx_reset() -> int:
    """Frees this process's device memory, streams and events (modules stay loaded)."""
    rt.reset_device("cuDevicePrimaryCtxReset")
    mempool.forget_all()
    return SUCCESS


# ------------------------------------------------------------------ pitched memory, 2D copies, registered memory

PITCH_ALIGNMENT = 256
HOST_MEMORY_ALREADY_REGISTERED = 712
HOST_MEMORY_NOT_REGISTERED = 713


@implements(DRIVER_API, "cuMemAllocPitch")
def mem_alloc_pitch(dptr: int, ppitch: int, width: int, height: int, element_size: int) -> int:
    _out(ppitch)
    if element_size not in (4, 8, 16) or not width or not height:
        return INVALID_VALUE
    pitch = (width + PITCH_ALIGNMENT - 1) // PITCH_ALIGNMENT * PITCH_ALIGNMENT
    err = mem_alloc(dptr, pitch * height)
    if err == SUCCESS:
        hostmem.store_u64(ppitch, pitch)
    return err


@implements(DRIVER_API, "cuMemcpy2D")
def memcpy_2d(dst: int, dpitch: int, src: int, spitch: int, width: int, height: int, kind: int,
              stream: int, is_async: int) -> int:
    if width > dpitch or width > spitch:
        return INVALID_VALUE
    if kind == 4:
        kind = rt.kind_of(dst, src, 4)
    if width == dpitch == spitch:
        return _copy(kind, dst, src, width * height, stream, is_async)
    for row in range(height):
        _copy(kind, dst + row * dpitch, src + row * spitch, width, stream, 1)
    if not is_async:
        stream_synchronize(stream)
    return SUCCESS


@implements(DRIVER_API, "cuMemHostRegister")
def mem_host_register(ptr: int, size: int, flags: int) -> int:
    if not ptr or not size or flags & ~mapped.REGISTER_FLAGS:
        return INVALID_VALUE
    if _pinned_range(ptr) is not None:
        return HOST_MEMORY_ALREADY_REGISTERED
    rt.mapped_memory.register(ptr, size, flags)
    return SUCCESS


@implements(DRIVER_API, "cuMemHostUnregister")
def mem_host_unregister(ptr: int) -> int:
    return SUCCESS if rt.unregister_host(ptr) else HOST_MEMORY_NOT_REGISTERED
