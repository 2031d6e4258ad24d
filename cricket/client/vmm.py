"""The driver's virtual memory management: ``cuMemCreate``, ``cuMemAddressReserve``, ``cuMemMap``,
``cuMemSetAccess``, ``cuMemUnmap``, ``cuMemRelease``, ``cuMemAddressFree`` and
``cuMemGetAllocationGranularity`` (the runtime API has none of its own).

A physical allocation (``CUmemGenericAllocationHandle``) is a device allocation of the session,
counted in its memory budget. A reservation is a range of the session's address space
(``cricket.server.vmm``), counted in the budget too: mapped memory counts twice there. Mapping places a physical allocation's bytes at an address
of a reservation, where kernels and copies use them; unmapping puts them back, so what a physical
allocation holds survives being unmapped and mapped elsewhere. Known limits on the emulated
device: a physical allocation is mapped at one place at a time (a second ``cuMemMap`` of the same
handle is CUDA_ERROR_NOT_SUPPORTED), and the unmapped parts of a reservation do not fault.
"""
from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field

from cricket.client.driver_face import DRIVER_API
from cricket.client.faces import implements
from cricket.client.runtime import RUNTIME as rt
from cricket.client.runtime import hostmem

log = logging.getLogger(__name__)

SUCCESS, INVALID_VALUE, OUT_OF_MEMORY, INVALID_DEVICE, NOT_SUPPORTED = 0, 1, 2, 101, 801
GRANULARITY = 2 << 20                   # minimum and recommended: what GPUs report
ALLOCATION_TYPE_PINNED = 1              # CU_MEM_ALLOCATION_TYPE_PINNED
LOCATION_DEVICE = 1                     # CU_MEM_LOCATION_TYPE_DEVICE
ACCESS_NONE, ACCESS_READ, ACCESS_READ_WRITE = 0, 1, 3     # CU_MEM_ACCESS_FLAGS_PROT_*
ACCESS_DESC_SIZE = 12                   # CUmemAccessDesc: location {type, id}, flags
GRANULARITY_OPTIONS = (0, 1)            # CU_MEM_ALLOC_GRANULARITY_MINIMUM, _RECOMMENDED


@dataclass
class Physical:
    handle: int
    backing: int                        # the session's allocation that holds it while unmapped
    size: int
    device: int
    mapped_at: int = 0
    references: int = 1                 # cuMemCreate and each cuMemRetainAllocationHandle

    @property
    def released(self) -> bool:
        return self.references == 0


@dataclass
class Reservation:
    base: int                           # the server's range (``start`` is aligned in it)
    start: int
    size: int
    mappings: dict[int, Physical] = field(default_factory=dict)    # address -> physical
    access: dict[int, int] = field(default_factory=dict)           # mapped address -> flags


_physical: dict[int, Physical] = {}
_reservations: dict[int, Reservation] = {}     # start -> reservation
_lock = threading.RLock()


def _check_props(alloc_type: int, location_type: int, device: int, handle_types: int) -> int:
    if alloc_type != ALLOCATION_TYPE_PINNED or location_type != LOCATION_DEVICE:
        return INVALID_VALUE
    if not 0 <= device < len(rt.devices):
        return INVALID_DEVICE
    if handle_types:
        log.warning("cuMemCreate: exportable allocations (handle types %#x) are not supported", handle_types)
        return NOT_SUPPORTED
    return SUCCESS


def _reservation_of(ptr: int, size: int) -> Reservation | None:
    for r in _reservations.values():
        if r.start <= ptr and ptr + size <= r.start + r.size:
            return r
    return None


def _dtod(dst: int, src: int, size: int) -> None:
    from cricket.protocol import gen as P
    conn = rt.conn
    conn._check(conn._stub.CR_MEMCPY_DTOD(P.cr_dtod_args(dst=dst, src=src, size=size, stream=0)), "cuMemcpyDtoD")


@implements(DRIVER_API, "cuMemGetAllocationGranularity")
def get_allocation_granularity(out: int, alloc_type: int, location_type: int, device: int, handle_types: int,
                               option: int) -> int:
    if not out or option not in GRANULARITY_OPTIONS:
        return INVALID_VALUE
    err = _check_props(alloc_type, location_type, device, handle_types)
    if err:
        return err
    hostmem.store_u64(out, GRANULARITY)
    return SUCCESS


@implements(DRIVER_API, "cuMemCreate")
def mem_create(out: int, size: int, alloc_type: int, location_type: int, device: int, handle_types: int,
               flags: int) -> int:
    """A physical allocation of ``size`` bytes, a multiple of the granularity."""
    if not out or size == 0 or size % GRANULARITY or flags:
        return INVALID_VALUE
    err = _check_props(alloc_type, location_type, device, handle_types)
    if err:
        return err
    conn = rt.conn
    backing = conn._check(conn._stub.CR_MEM_ALLOC(size), "cuMemCreate").ptr
    p = Physical(rt.new_handle(), backing, size, device)
    with _lock:
        _physical[p.handle] = p
    hostmem.store_u64(out, p.handle)
    return SUCCESS


def _free_backing(p: Physical) -> None:
    conn = rt.conn
    conn._check(conn._stub.CR_MEM_FREE(p.backing), "cuMemRelease")


@implements(DRIVER_API, "cuMemRelease")
def mem_release(handle: int) -> int:
    """Freed now, or once it is unmapped ("the memory is released when all mappings are unmapped")."""
    with _lock:
        p = _physical.get(handle)
        if p is None or p.released:
            return INVALID_VALUE
        p.references -= 1
        if p.released and not p.mapped_at:
            del _physical[handle]
            _free_backing(p)
    return SUCCESS


@implements(DRIVER_API, "cuMemAddressReserve")
def address_reserve(out: int, size: int, alignment: int, addr: int, flags: int) -> int:
    """A range of ``size`` bytes (a multiple of the granularity) at an address aligned to
    ``alignment`` (0: the granularity); ``addr`` is a hint, not followed."""
    if not out or size == 0 or size % GRANULARITY or flags or alignment & (alignment - 1):
        return INVALID_VALUE
    align = max(alignment, GRANULARITY)
    conn = rt.conn
    base = conn._check(conn._stub.CR_VMM_RESERVE(size + align), "cuMemAddressReserve").ptr
    start = (base + align - 1) // align * align
    rt.reserve(start, size)
    with _lock:
        _reservations[start] = Reservation(base, start, size)
    hostmem.store_u64(out, start)
    return SUCCESS


@implements(DRIVER_API, "cuMemAddressFree")
def address_free(ptr: int, size: int) -> int:
    with _lock:
        r = _reservations.get(ptr)
        if r is None or r.size != size:
            return INVALID_VALUE
        if r.mappings:
            _unmap(r, r.start, r.size)
        del _reservations[ptr]
    conn = rt.conn
    conn._check(conn._stub.CR_VMM_FREE(r.base), "cuMemAddressFree")
    return SUCCESS


@implements(DRIVER_API, "cuMemMap")
def mem_map(ptr: int, size: int, offset: int, handle: int, flags: int) -> int:
    """The physical allocation's bytes at [ptr, ptr+size) of a reservation ("offset ... must be zero")."""
    with _lock:
        p = _physical.get(handle)
        r = _reservation_of(ptr, size)
        if p is None or p.released or r is None or offset or flags or size != p.size or ptr % GRANULARITY:
            return INVALID_VALUE
        if p.mapped_at:
            log.warning("cuMemMap: physical allocation %#x is mapped at %#x already; one mapping at a time "
                        "is supported", handle, p.mapped_at)
            return NOT_SUPPORTED
        if any(a < ptr + size and ptr < a + q.size for a, q in r.mappings.items()):
            return INVALID_VALUE
        rt.drain()
        _dtod(ptr, p.backing, size)
        p.mapped_at = ptr
        r.mappings[ptr] = p
        rt.add_allocation(ptr, size)
    return SUCCESS


def _unmap(r: Reservation, ptr: int, size: int) -> None:
    rt.drain()
    for address, p in sorted(r.mappings.items()):
        if ptr <= address and address + p.size <= ptr + size:
            del r.mappings[address]
            r.access.pop(address, None)
            rt.remove_allocation(address)
            p.mapped_at = 0
            if p.released:
                del _physical[p.handle]
                _free_backing(p)
            else:
                _dtod(p.backing, address, p.size)


@implements(DRIVER_API, "cuMemUnmap")
def mem_unmap(ptr: int, size: int) -> int:
    """Unmap whole mappings in [ptr, ptr+size); their bytes go back to their physical allocations."""
    with _lock:
        r = _reservation_of(ptr, size)
        if r is None or not any(ptr <= a and a + p.size <= ptr + size for a, p in r.mappings.items()):
            return INVALID_VALUE
        _unmap(r, ptr, size)
    return SUCCESS


@implements(DRIVER_API, "cuMemSetAccess")
def mem_set_access(ptr: int, size: int, descs: int, count: int) -> int:
    """Kept for cuMemGetAccess; the emulated device does not fault on an access without it."""
    with _lock:
        r = _reservation_of(ptr, size)
        mapped = [a for a, p in (r.mappings.items() if r else ()) if a < ptr + size and ptr < a + p.size]
        if not count or not descs or not mapped:
            return INVALID_VALUE
        for i in range(count):
            location_type = hostmem.load_u32(descs + i * ACCESS_DESC_SIZE)
            device = hostmem.load_u32(descs + i * ACCESS_DESC_SIZE + 4)
            flags = hostmem.load_u32(descs + i * ACCESS_DESC_SIZE + 8)
            if location_type != LOCATION_DEVICE or flags not in (ACCESS_NONE, ACCESS_READ, ACCESS_READ_WRITE):
                return INVALID_VALUE
            if not 0 <= device < len(rt.devices):
                return INVALID_DEVICE
            for a in mapped:
                r.access[a] = flags
    return SUCCESS


@implements(DRIVER_API, "cuMemGetAccess")
def mem_get_access(out: int, location_type: int, device: int, ptr: int) -> int:
    with _lock:
        r = _reservation_of(ptr, 1)
        found = [a for a, p in (r.mappings.items() if r else ()) if a <= ptr < a + p.size]
        if not out or not found or location_type != LOCATION_DEVICE:
            return INVALID_VALUE
        hostmem.store_u64(out, r.access.get(found[0], ACCESS_NONE))
    return SUCCESS


@implements(DRIVER_API, "cuMemRetainAllocationHandle")
def retain_allocation_handle(out: int, ptr: int) -> int:
    """The handle of the physical allocation mapped at ``ptr``, with one more reference (each one
    is given back by a cuMemRelease)."""
    with _lock:
        for r in _reservations.values():
            for a, p in r.mappings.items():
                if a <= ptr < a + p.size and out:
                    p.references += 1
                    hostmem.store_u64(out, p.handle)
                    return SUCCESS
    return INVALID_VALUE
