"""IPC handles between the sessions of one emu server (cricket.server.ipc), at the protocol: who
may open a handle, what a handle names, and that the memory is shared both ways. Two connections
of this test stand for two client processes; examples/ipc_memory.cu runs the same through the
CUDA runtime API in two processes (tests/client_runtime/test_memory_examples.py)."""
from __future__ import annotations

import secrets
import weakref

import pytest

from cricket.client.api import connect
from cricket.cudafacts import curesult
from cricket.protocol import gen as P
from cricket.server import ipc
from cricket.server.session import Session


def _read(conn, ptr: int, size: int) -> bytes:
    return bytes(conn._stub.CR_MEMCPY_DTOH(P.cr_dtoh_args(src=ptr, size=size, stream=0)).data)


def test_memory_is_shared_both_ways_and_refcounted(emu_server):
    with connect(emu_server.address) as owner, connect(emu_server.address) as other:
        buf = owner.to_device(bytes(range(256)) * 64)
        handle = owner._stub.CR_IPC_GET_MEM_HANDLE(buf.device_ptr).handle
        assert len(handle) == 64
        first = other._stub.CR_IPC_OPEN_MEM_HANDLE(handle).global_
        again = other._stub.CR_IPC_OPEN_MEM_HANDLE(handle).global_
        assert (first.ptr, first.size) == (again.ptr, again.size) and first.size == 256 * 64
        assert _read(other, first.ptr, 256 * 64) == bytes(range(256)) * 64
        # the importer writes one page: the exporter sees it, and its other bytes are its own
        other._stub.CR_MEMSET(P.cr_memset_args(dst=first.ptr + 4096, value=0x7F, element_size=1, count=16,
                                               stream=0))
        data = _read(owner, buf.device_ptr, 256 * 64)
        assert data[4096:4112] == b"\x7f" * 16 and data[:4096] == (bytes(range(256)) * 16)
        # the exporter writes: the importer sees it at its next operation
        owner._stub.CR_MEMSET(P.cr_memset_args(dst=buf.device_ptr, value=0x11, element_size=1, count=8,
                                               stream=0))
        assert _read(other, first.ptr, 8) == b"\x11" * 8
        assert other._stub.CR_IPC_CLOSE_MEM_HANDLE(first.ptr).status == 0
        assert other._stub.CR_IPC_CLOSE_MEM_HANDLE(first.ptr).status == 0       # opened twice
        assert other._stub.CR_IPC_CLOSE_MEM_HANDLE(first.ptr).status == curesult.INVALID_VALUE


def test_handles_name_nothing_else(emu_server):
    with connect(emu_server.address) as owner, connect(emu_server.address) as other:
        buf = owner.alloc(4096)
        assert owner._stub.CR_IPC_GET_MEM_HANDLE(buf.device_ptr + 16).status == curesult.INVALID_VALUE
        handle = owner._stub.CR_IPC_GET_MEM_HANDLE(buf.device_ptr).handle
        assert owner._stub.CR_IPC_OPEN_MEM_HANDLE(handle).status == curesult.INVALID_CONTEXT     # its own
        assert other._stub.CR_IPC_OPEN_MEM_HANDLE(secrets.token_bytes(64)).status == curesult.INVALID_HANDLE
        event = owner._stub.CR_EVENT_CREATE(0).handle
        event_handle = owner._stub.CR_IPC_GET_EVENT_HANDLE(event).handle
        assert other._stub.CR_IPC_OPEN_MEM_HANDLE(event_handle).status == curesult.INVALID_HANDLE
        assert other._stub.CR_IPC_OPEN_EVENT_HANDLE(handle).status == curesult.INVALID_HANDLE
        opened = other._stub.CR_IPC_OPEN_EVENT_HANDLE(event_handle)
        assert opened.status == 0 and other._stub.CR_EVENT_SYNCHRONIZE(opened.handle).status == 0
        owner._stub.CR_MEM_FREE(buf.device_ptr)                   # the exporter's free invalidates
        assert other._stub.CR_IPC_OPEN_MEM_HANDLE(handle).status == curesult.INVALID_HANDLE
    with connect(emu_server.address) as late:                     # ... as does its going away
        assert late._stub.CR_IPC_OPEN_EVENT_HANDLE(event_handle).status == curesult.INVALID_HANDLE


def test_only_a_session_of_the_same_user_may_open():
    owner, same_user, stranger = Session("a"), Session("b"), Session("c")
    owner.peer_uid, same_user.peer_uid, stranger.peer_uid = 1000, 1000, 1001
    try:
        export = ipc.Export(weakref.ref(owner), owner.peer_uid, event=object())
        handle = ipc._new_handle(owner, export)
        assert ipc._find(same_user, handle, "event") is export
        with pytest.raises(ipc.BackendError) as refused:
            ipc._find(stranger, handle, "event")
        assert refused.value.code == curesult.INVALID_HANDLE
    finally:
        for s in (owner, same_user, stranger):
            s.worker.shutdown(wait=False)


def test_handles_of_freed_memory_are_forgotten_and_do_not_count():
    owner = Session("allocator")          # shares blocks and frees them, as a caching allocator does
    try:
        handles = []
        for i in range(3):
            owner.allocations.add(0x1000 * (i + 1), 256)
            handles.append(ipc._new_handle(owner, ipc.Export(weakref.ref(owner), None, ptr=0x1000 * (i + 1),
                                                              size=256,
                                                              serial=owner.allocations.serial(0x1000 * (i + 1)))))
        owner.allocations.remove(0x1000)
        owner.allocations.remove(0x2000)
        ipc._sweep()
        assert ipc._state(owner).exports == 1
        assert [h in ipc._exports for h in handles] == [False, False, True]
    finally:
        owner.worker.shutdown(wait=False)
