"""CUDA IPC: ``cudaIpc{Get,Open,Close}MemHandle``, ``cudaIpc{Get,Open}EventHandle`` and the driver's
``cuIpc*`` twins, between processes that are clients of the same server (``cricket.server.ipc``
says who may open a handle and how the memory is shared).

A handle is the 64 bytes the server made; the C shims pass its address. Opened memory is an
allocation of this process at the address the server chose (the same handle opened twice gives
the same address, as CUDA's reference count does); ``cudaIpcCloseMemHandle`` gives it back.
Both faces return the same numbers here: 1 invalid value, 201 for a handle of this very process
(``cudaErrorDeviceUninitialized`` / ``CUDA_ERROR_INVALID_CONTEXT``), 400 for a handle that names
nothing open (``cudaErrorInvalidResourceHandle`` / ``CUDA_ERROR_INVALID_HANDLE``).
"""
from __future__ import annotations

import logging
import threading

from cricket.client.driver_face import DRIVER_API
from cricket.client.faces import implements
from cricket.client.runtime import RUNTIME as rt
from cricket.client.runtime import hostmem
from cricket.client.runtime_face import RUNTIME_API

log = logging.getLogger(__name__)

SUCCESS, INVALID_VALUE = 0, 1
HANDLE_SIZE = 64
LAZY_ENABLE_PEER_ACCESS = 0x1           # cudaIpcMemLazyEnablePeerAccess / CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS

_opened: dict[int, int] = {}            # opened address -> times opened
_lock = threading.Lock()


@implements(RUNTIME_API, "cudaIpcGetMemHandle")
@implements(DRIVER_API, "cuIpcGetMemHandle")
def ipc_get_mem_handle(out: int, ptr: int) -> int:
    """The handle of the allocation whose base is ``ptr`` (the server checks it is one)."""
    if not out:
        return INVALID_VALUE
    conn = rt.conn
    res = conn._check(conn._stub.CR_IPC_GET_MEM_HANDLE(ptr), "cuIpcGetMemHandle")
    hostmem.write(out, bytes(res.handle))
    return SUCCESS


@implements(RUNTIME_API, "cudaIpcOpenMemHandle")
@implements(DRIVER_API, "cuIpcOpenMemHandle")
def ipc_open_mem_handle(out: int, handle: int, flags: int) -> int:
    """``handle``: the address of the 64 handle bytes. "flags ... Must be specified as
    cudaIpcMemLazyEnablePeerAccess" (a single device has no peers to enable)."""
    if not out or not handle or flags != LAZY_ENABLE_PEER_ACCESS:
        return INVALID_VALUE
    conn = rt.conn
    g = conn._check(conn._stub.CR_IPC_OPEN_MEM_HANDLE(hostmem.read(handle, HANDLE_SIZE)),
                    "cuIpcOpenMemHandle").global_
    with _lock:
        if g.ptr not in _opened:
            rt.add_allocation(g.ptr, g.size)
        _opened[g.ptr] = _opened.get(g.ptr, 0) + 1
    hostmem.store_u64(out, g.ptr)
    return SUCCESS


@implements(RUNTIME_API, "cudaIpcCloseMemHandle")
@implements(DRIVER_API, "cuIpcCloseMemHandle")
def ipc_close_mem_handle(ptr: int) -> int:
    with _lock:
        if ptr not in _opened:
            return INVALID_VALUE
        _opened[ptr] -= 1
        last = not _opened[ptr]
        if last:
            del _opened[ptr]
    rt.drain()
    if last:
        rt.remove_allocation(ptr)
    conn = rt.conn
    conn._check(conn._stub.CR_IPC_CLOSE_MEM_HANDLE(ptr), "cuIpcCloseMemHandle")
    return SUCCESS


@implements(RUNTIME_API, "cudaIpcGetEventHandle")
@implements(DRIVER_API, "cuIpcGetEventHandle")
def ipc_get_event_handle(out: int, event: int) -> int:
    if not out:
        return INVALID_VALUE
    server = rt.event(event)
    rt.drain()
    conn = rt.conn
    res = conn._check(conn._stub.CR_IPC_GET_EVENT_HANDLE(server), "cuIpcGetEventHandle")
    rt.ipc_events[event] = False        # its records go out at once: another process may wait on them
    hostmem.write(out, bytes(res.handle))
    return SUCCESS


@implements(RUNTIME_API, "cudaIpcOpenEventHandle")
@implements(DRIVER_API, "cuIpcOpenEventHandle")
def ipc_open_event_handle(out: int, handle: int) -> int:
    """An event of this process that is the exporter's: waiting on it waits for the exporter."""
    if not out or not handle:
        return INVALID_VALUE
    conn = rt.conn
    server = conn._check(conn._stub.CR_IPC_OPEN_EVENT_HANDLE(hostmem.read(handle, HANDLE_SIZE)),
                         "cuIpcOpenEventHandle").handle
    app = rt.new_handle()
    rt.events[app] = server
    rt.ipc_events[app] = True           # streams wait for it on the host (the server's emu device cannot)
    hostmem.store_u64(out, app)
    return SUCCESS
