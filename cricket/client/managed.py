"""Managed memory: ``cudaMallocManaged``/``cuMemAllocManaged``, prefetching and advice.

The application reads and writes a managed pointer on the host, kernels on the device, and each
sees the other's writes at the points CUDA defines for a device without concurrent managed access
(``cudaDevAttrConcurrentManagedAccess`` is 0): the host must not touch the memory while a kernel
may run, and everything is coherent after a synchronisation.

Here a managed allocation is a device allocation with host pages mapped at the same address, inside
the device address window the client reserves (``windows``), so the pointer is valid on both
sides, and it is kept coherent by the machinery of mapped pinned memory (``mapped``): pushed before
a launch, pulled back after a synchronising call; copies and memsets that name it work on the host
side. What differs is what moves: a managed range keeps a snapshot of what the device holds, and
before a launch only the pages whose bytes differ from it go out (a NumPy compare runs at memory
speed, far above the speed of any copy to the server; ``bench/managed_memory.py`` measures it).
Kernels' writes cannot be seen from here, so a pull brings the whole range back.

Why a snapshot and not the kernel's dirty bits: ``mprotect`` and a SIGSEGV handler would need a
handler in C that runs in the application's threads (and a fault per first write to each page);
``/proc/self/pagemap`` soft-dirty bits need ``clear_refs`` for the whole process, which resets them
for every mapping, and are absent where the kernel lacks ``CONFIG_MEM_SOFT_DIRTY``. The snapshot
costs one more copy of the managed memory on the client, and nothing on the server.
"""
from __future__ import annotations

import ctypes
import logging

from cricket.client.driver_face import DRIVER_API
from cricket.client.faces import implements
from cricket.client.mapped import PAGE, MappedRange, _round_up
from cricket.client.runtime import RUNTIME as rt
from cricket.client.runtime import hostmem
from cricket.client.runtime_face import RUNTIME_API

log = logging.getLogger(__name__)

SUCCESS, INVALID_VALUE, OUT_OF_MEMORY, INVALID_DEVICE = 0, 1, 2, 101
ATTACH_GLOBAL, ATTACH_HOST, ATTACH_SINGLE = 0x1, 0x2, 0x4      # cudaMemAttach* / CU_MEM_ATTACH_*
LOCATION_DEVICE, LOCATION_HOST = 1, 2                          # cudaMemLocationType
ADVICE_FIRST, ADVICE_LAST = 1, 6                               # cudaMemAdviseSetReadMostly .. UnsetAccessedBy


def owns(ptr: int) -> bool:
    """True when ``ptr`` is the start of a managed allocation of this process."""
    r = rt.mapped_memory.ranges.get(ptr)
    return r is not None and r.snapshot is not None


def allocate(size: int) -> int:
    """A managed allocation of ``size`` bytes: device memory and host pages at one address, both
    zero. Raises MemoryError when no host pages can be placed at the device address."""
    import numpy as np      # only here: the CUDA shim's client starts without NumPy
    mm = rt.mapped_memory
    conn = rt.conn
    length = _round_up(size, PAGE)
    span = length + PAGE
    backing = conn._check(conn._stub.CR_MEM_ALLOC(span), "cuMemAllocManaged").ptr
    rt.add_allocation(backing, span)
    address = _round_up(backing, PAGE)
    if not mm._map_fixed(address, length):
        rt.free_allocation(backing)
        raise MemoryError(f"no host pages can be mapped at device address {address:#x}")
    rt.memset(address, 0, length, 0, False)         # the device side starts as the host's: zero
    r = MappedRange(address, address, size, backing, True, snapshot=np.zeros(length, np.uint8))
    with mm._lock:
        mm.at_device_address[address] = length
        mm.ranges[address] = r
        mm.host_dirty = True
    log.debug("managed memory %#x (%d bytes)", address, size)
    return address


def free(ptr: int) -> None:
    """Free managed allocation ``ptr`` (``owns(ptr)``), after the device's work is done."""
    mm = rt.mapped_memory
    rt.drain()
    with mm._lock:
        r = mm.ranges.pop(ptr)
        length = mm.at_device_address.pop(ptr)
    mm._unmap(ptr, length)
    mm._release(r)


_module_pages: set[int] = set()      # host pages mapped over module globals (never unmapped)


def _global(module: int, name: str) -> tuple[int, int]:
    """(address, size) of the global ``name`` of server module ``module``."""
    from cricket.protocol import gen as P
    conn = rt.conn
    g = conn._check(conn._stub.CR_MODULE_GET_GLOBAL(P.cr_get_args(module=module, name=name)),
                    f"cuModuleGetGlobal({name})").global_
    return g.ptr, g.size


def place_global(ptr: int, size: int, name: str) -> None:
    """Make module global [ptr, ptr+size) managed: host pages mapped at its address, holding the
    value the device has (its initialiser). Placing it again does nothing."""
    import numpy as np      # only here: the CUDA shim's client starts without NumPy
    mm = rt.mapped_memory
    rt.reserve(ptr, size)
    with mm._lock:
        if ptr in mm.ranges:
            return
        for page in range(ptr // PAGE * PAGE, _round_up(ptr + size, PAGE), PAGE):
            if page not in _module_pages:
                if not mm._map_fixed(page, PAGE):
                    raise MemoryError(f"no host page can be mapped at {page:#x} for __managed__ {name}")
                _module_pages.add(page)
        rt.dtoh(ptr, ptr, size, 0)
        snapshot = np.empty(_round_up(size, PAGE), np.uint8)
        snapshot[:size] = np.ctypeslib.as_array((ctypes.c_uint8 * size).from_address(ptr))
        mm.ranges[ptr] = MappedRange(ptr, ptr, size, 0, True, snapshot=snapshot)
        mm.host_dirty = True
    log.debug("__managed__ %s at %#x (%d bytes)", name, ptr, size)


def place_library_variable(module: int, name: str) -> tuple[int, int]:
    """cuLibraryGetManaged (driver_api; how NVIDIA's cudart finds __managed__ variables): the
    global ``name`` of server module ``module``, placed; its (address, size)."""
    ptr, size = _global(module, name)
    place_global(ptr, size, name)
    return ptr, size


def place_module_variables(handle: int, variables: list) -> None:
    """``__managed__`` variables of the fatbin ``handle`` (at ``__cudaInitModule``, the first host
    use of one, through the libcudart shim): each is its module global (``place_global``), and the
    host shadow pointer nvcc made is set to it."""
    module = rt.module(handle)
    for v in variables:
        name = (v.device_name or v.device_address or b"").decode(errors="replace")
        ptr, size = _global(module, name)
        place_global(ptr, size, name)
        hostmem.store_u64(v.host_var, ptr)


def _range_of(ptr: int, count: int) -> MappedRange | None:
    found = rt.mapped_memory.find(ptr) if rt.mapped_memory.ranges else None
    if found is None or found[0].snapshot is None or found[1] + count > found[0].size:
        return None
    return found[0]


@implements(RUNTIME_API, "cudaMallocManaged")
def cuda_malloc_managed(out: int, size: int, flags: int) -> int:
    """As NVIDIA's cudart 13 answers (traced through its static build on cricket's libcuda): 0 bytes
    give NULL and cudaSuccess without reaching the driver, although the runtime API's reference
    says cudaErrorInvalidValue."""
    if out and size == 0 and flags in (ATTACH_GLOBAL, ATTACH_HOST):
        hostmem.store_u64(out, 0)
        return SUCCESS
    return malloc_managed(out, size, flags)


@implements(DRIVER_API, "cuMemAllocManaged")
def malloc_managed(out: int, size: int, flags: int) -> int:
    """cuMemAllocManaged: "If bytesize is 0, cuMemAllocManaged returns CUDA_ERROR_INVALID_VALUE", as
    for flags other than one of CU_MEM_ATTACH_GLOBAL and CU_MEM_ATTACH_HOST."""
    if not out or size == 0 or flags not in (ATTACH_GLOBAL, ATTACH_HOST):
        return INVALID_VALUE
    try:
        hostmem.store_u64(out, allocate(size))
    except MemoryError as exc:
        log.warning("cudaMallocManaged(%d): %s", size, exc)
        return OUT_OF_MEMORY
    return SUCCESS


@implements(RUNTIME_API, "cudaMemPrefetchAsync")
@implements(DRIVER_API, "cuMemPrefetchAsync")
def mem_prefetch_async(ptr: int, count: int, location_type: int, location_id: int, flags: int,
                       stream: int) -> int:
    """To the device: the host's changes in the range go now, in the stream (a later launch finds
    nothing to push). To the host: the range comes back at the next synchronisation anyway."""
    server = rt.stream(stream)
    r = _range_of(ptr, count)
    if r is None or flags:
        return INVALID_VALUE
    if location_type == LOCATION_DEVICE:
        if not 0 <= location_id < len(rt.devices):
            return INVALID_DEVICE
        from cricket.client.mapped import push_changed_pages
        with rt.mapped_memory._lock:
            push_changed_pages(rt, r, server)
    elif location_type != LOCATION_HOST:
        return INVALID_VALUE
    return SUCCESS


@implements(RUNTIME_API, "cudaMemAdvise")
@implements(DRIVER_API, "cuMemAdvise")
def mem_advise(ptr: int, count: int, advice: int, location_type: int, location_id: int) -> int:
    """Advice is a hint: checked (a managed range, a known advice and location) and kept by no one,
    as a single device with one copy of each page has nothing to place differently."""
    if _range_of(ptr, count) is None or not ADVICE_FIRST <= advice <= ADVICE_LAST:
        return INVALID_VALUE
    if location_type == LOCATION_DEVICE and not 0 <= location_id < len(rt.devices):
        return INVALID_DEVICE
    if location_type not in (LOCATION_DEVICE, LOCATION_HOST):
        return INVALID_VALUE
    return SUCCESS


@implements(RUNTIME_API, "cudaStreamAttachMemAsync")
@implements(DRIVER_API, "cuStreamAttachMemAsync")
def stream_attach_mem_async(stream: int, ptr: int, length: int, flags: int) -> int:
    """Checked and accepted: with one copy of each page and coherence at synchronisation, which
    stream may touch a managed range changes nothing here."""
    rt.stream(stream)
    if flags not in (ATTACH_GLOBAL, ATTACH_HOST, ATTACH_SINGLE) or _range_of(ptr, max(length, 1)) is None:
        return INVALID_VALUE
    return SUCCESS
