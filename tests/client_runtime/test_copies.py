"""The copies (``cext/copies.pyx``) and their pure-Python twin move the same bytes through a real
emu server: small and multi-chunk copies both ways, synchronous and batched, and deferred
device-to-host copies that complete in issue order when the host range is needed or at a mark."""
from __future__ import annotations

import ctypes
import importlib
import os

import pytest

from cricket.client.runtime import Stats
from cricket.client.session import Session

IMPLEMENTATIONS = ["cricket._cext.copies", "cricket.client.copies"]
SIZES = [100, (3 << 20) + 5]          # one inline call; two chunks of the socket path


def _copies(module: str):
    try:
        return importlib.import_module(module).Copies(Stats())
    except ImportError:
        pytest.skip(f"{module} is not built (make build)")


@pytest.fixture
def session(server):
    conn = Session(server.address)
    yield conn
    conn.close()


def _alloc(conn: Session, size: int) -> int:
    return conn._check(conn._stub.CR_MEM_ALLOC(size), "cuMemAlloc").ptr


def _round_trip(module: str, conn: Session, size: int, sync: bool) -> tuple[bytes, int, int]:
    copies = _copies(module)
    data = os.urandom(size)
    src = ctypes.create_string_buffer(data, size)
    dst = ctypes.create_string_buffer(size)
    dev = _alloc(conn, size)
    copies.htod(conn, dev, ctypes.addressof(src), size, 0, sync)
    copies.dtoh(conn, ctypes.addressof(dst), dev, size, 0)
    assert dst.raw == data
    return dst.raw[:16], copies.stats.bytes_htod, copies.stats.bytes_dtoh


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("sync", [True, False])
def test_compiled_and_twin_copy_the_same_bytes(session, size, sync):
    results = [_round_trip(module, session, size, sync)[1:] for module in IMPLEMENTATIONS]
    assert results[0] == results[1] == (size, size)


@pytest.mark.parametrize("module", IMPLEMENTATIONS)
def test_deferred_copies_land_in_issue_order_when_their_bytes_are_needed(module, session):
    copies = _copies(module)
    size = 4096
    a, b = os.urandom(size), os.urandom(size)
    dev_a, dev_b = _alloc(session, size), _alloc(session, size)
    for dev, data in ((dev_a, a), (dev_b, b)):
        src = ctypes.create_string_buffer(data, size)
        copies.htod(session, dev, ctypes.addressof(src), size, 0, True)
    host = ctypes.create_string_buffer(size)
    other = ctypes.create_string_buffer(size)
    h = ctypes.addressof(host)
    copies.defer(copies.dtoh_start(session, h, dev_a, size, 0), h, size)
    copies.mark_event(1)                                  # an event recorded after the first copy
    copies.defer(copies.dtoh_start(session, h, dev_b, size, 0), h, size)   # the same bytes, later
    copies.defer(copies.dtoh_start(session, ctypes.addressof(other), dev_a, size, 0),
                 ctypes.addressof(other), size)
    assert len(copies.pending) == 3 and host.raw == bytes(size)
    copies.finish_deferred(copies.event_marks[1])         # the event's wait: the first copy only
    assert host.raw == a and len(copies.pending) == 2
    copies.settle_host_range(h + size, 16)                # beside the pending copies: nothing
    assert len(copies.pending) == 2
    copies.settle_host_range(h + 10, 1)                   # inside one: all complete, in order
    assert host.raw == b and other.raw == a and copies.pending == []
    assert copies.stats.bytes_dtoh == 3 * size and not copies.draining
