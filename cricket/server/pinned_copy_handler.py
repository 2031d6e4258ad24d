"""Pure-Python twin of ``cricket._cext.pinned_copy_handler`` (``cext/pinned_copy_handler.pyx``): the handlers
of ``CR_MEMCPY_HTOD_PINNED`` and ``CR_MEMCPY_DTOH_PINNED``.

A small synchronous copy between a pinned region and the device is answered on the event loop
while the session's worker is idle (the quick rule of ``cricket.server.program``); this is that
path with the fewest calls. It makes the checks of ``shm.memcpy_htod_pinned`` /
``shm.memcpy_dtoh_pinned`` in their order (HELLO done, for D→H the session's pending asynchronous
error, the region mapped in this session, the range inside it, the device range inside one
allocation of the session) and, when they all pass on the default stream, copies with one
``memmove`` between the mapping and the device memory where the backend gives the device range's
host address (``Device.host_address``: the emu arena), else through the device's copy method.
Anything else (a check that fails, another stream, a device with no host address) runs the
service function itself, which says why, so the error replies are the ones it gives. A call
the quick rule does not allow (the worker busy, a large copy, a backend without quick memory
operations, no session yet) is the program's own ``_call``. Counters, latency and bytes moved are
those of ``_call``. See ``docs/copies.md``, "A compiled handler for pinned copies".
"""
from __future__ import annotations

import ctypes
import time
from typing import Any

from ..backends.base import BackendError
from ..protocol import gen as P
from ..rpc import current_connection_id
from . import shm

_memmove = ctypes.memmove


class PinnedCopies:
    """The two handlers of one ``CricketProgram``; ``quick_attr`` and ``most``: its quick rule for
    these copies (the backend attribute that allows them, the largest size)."""

    def __init__(self, program: Any, quick_attr: str, most: int, ok: Any) -> None:
        self.program = program
        self.sessions = program.sessions
        self.stats = program.service.stats
        self.quick_attr = quick_attr
        self.most = most
        self.ok = ok                 # the shared success result (never changed)

    def htod(self, a: Any) -> Any:
        """CR_MEMCPY_HTOD_PINNED."""
        return self._copy(a, True)

    def dtoh(self, a: Any) -> Any:
        """CR_MEMCPY_DTOH_PINNED."""
        return self._copy(a, False)

    def _copy(self, a: Any, htod: bool) -> Any:
        fn = shm.memcpy_htod_pinned if htod else shm.memcpy_dtoh_pinned
        number, ptr, stream, offset, size = a.region, a.device, a.stream, a.offset, a.size
        session = self.sessions.get(current_connection_id())
        if (session is None or session.queued or stream != 0 or size > self.most
                or not getattr(session.backend, self.quick_attr, False)):
            return self.program._call(P.cr_status_res, fn, number, ptr, stream, offset, size,
                                      moved=("htod" if htod else "dtoh", "shm", size))
        name = fn.__name__
        session.counters[name] += 1
        started = time.perf_counter()
        try:
            if not _fast(session, htod, number, ptr, offset, size):
                fn(session, number, ptr, stream, offset, size)
        except Exception as exc:
            return self.program._failed(session, P.cr_status_res, fn, exc)
        finally:
            self.stats.observe(name, time.perf_counter() - started)
        session.stats.copied["htod" if htod else "dtoh", "shm"] += size     # SessionStats.moved
        return self.ok


def _fast(session: Any, htod: bool, number: int, ptr: int, offset: int, size: int) -> bool:
    """Copy when every check passes (True); False: the service function must run (and says why)."""
    if session.backend is None or not htod and session.async_error is not None:
        return False
    regions = session.pinned_regions
    region = regions.regions.get(number) if regions is not None else None
    if region is None or offset < region.header or size < 0 or offset + size > region.size:
        return False
    try:
        base = session.allocations.check(ptr, size)
    except BackendError:
        return False
    device = session._device_at(base)       # the stand-in rule of Session.device_for
    address = device.host_address(ptr, size)
    if address is None:
        if htod:
            device.memcpy_htod_host(ptr, region.view[offset:offset + size], region.address + offset)
        else:
            device.memcpy_dtoh_host(ptr, region.view[offset:offset + size], region.address + offset)
    elif htod:
        _memmove(address, region.address + offset, size)
    else:
        _memmove(region.address + offset, address, size)
    return True
