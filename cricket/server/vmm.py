"""Virtual address reservations of the driver's virtual memory management (cuMemAddressReserve).

A reservation is a range of the session's device address space, made as a device allocation of the
session's device (on emu an arena range, which costs memory only where it is written). It counts
against the session's memory budget like an allocation, physical allocations mapped into it too
(``cricket.client.vmm``): a kernel may write anywhere in the range, so a range outside the budget
would be memory outside it. Reservations of one session are bounded all together, and
``CR_MEM_FREE`` refuses them: only ``CR_VMM_FREE`` gives one back, and the session's end.
"""
from __future__ import annotations

import logging
from typing import Any

from ..backends.base import BackendError
from ..cudafacts import curesult
from .service import _NoFree
from .session import Session

log = logging.getLogger(__name__)

MAX_RESERVED = 64 << 30                 # address space one session may hold reserved


class Reservation(_NoFree):
    """Stands in for the device in the session's allocation table: CR_MEM_FREE leaves it alone
    (as a module variable), and the session's end frees it on the device."""

    def mem_free(self, ptr: int) -> None:
        self.device.mem_free(ptr)


def _reserved(session: Session) -> int:
    return sum(size for base, size in session.allocations.items()
               if isinstance(session.alloc_device.get(base), Reservation))


def reserve(session: Session, service: Any, size: int) -> int:
    """CR_VMM_RESERVE: the base of a new range of ``size`` bytes."""
    service._ready(session)
    if size == 0 or _reserved(session) + size > MAX_RESERVED:
        raise BackendError(curesult.OUT_OF_MEMORY if size else curesult.INVALID_VALUE,
                           f"cannot reserve {size} bytes of address space ({_reserved(session)} of "
                           f"{MAX_RESERVED} reserved)")
    ptr = service.mem_alloc(session, size)                  # in the budget, as an allocation
    session.alloc_device[ptr] = Reservation(session.alloc_device[ptr])
    log.debug("session %d: reserved %#x (%d bytes)", session.id, ptr, size)
    return ptr


def release(session: Session, service: Any, ptr: int) -> None:
    """CR_VMM_FREE: give back the range reserved at ``ptr``."""
    service._ready(session)
    if not isinstance(session.alloc_device.get(ptr), Reservation):
        raise BackendError(curesult.INVALID_VALUE, f"{ptr:#x} is not an address range this session reserved")
    size = session.allocations.remove(ptr)
    session.alloc_device.pop(ptr).mem_free(ptr)
    service.memory.release(session.id, size)
