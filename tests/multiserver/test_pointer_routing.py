"""Which server a device pointer goes to, by the allocation table where no server answered an
address range for it (as with the cuda backend), at the edges: the byte at the end, one past it,
a size-0 allocation, two adjacent allocations of two servers."""
from __future__ import annotations

import pytest

from cricket.client.runtime import Runtime

KIB = 1024
BASE = 0x6D00_0000_0000          # outside the ranges the emu servers answer


@pytest.fixture
def routed(servers, monkeypatch):
    """A Runtime of this process with a session on each of the two servers (devices a0, b0, b1)."""
    monkeypatch.setenv("CRICKET_SERVER", ",".join(s.address for s in servers))
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    rt = Runtime()
    rt.conn
    yield rt
    rt.servers.close()


def _file(rt: Runtime, device: int, ptr: int, size: int) -> None:
    rt.thread.device = device
    rt.select_device()
    rt.add_allocation(ptr, size)


def test_a_pointer_finds_the_server_of_its_allocation_at_the_edges(routed):
    rt = routed
    a, b = (m.session for m in rt.servers.members)
    _file(rt, 0, BASE, 4 * KIB)                     # server a
    _file(rt, 1, BASE + 4 * KIB, 4 * KIB)           # server b, adjacent
    _file(rt, 0, BASE + 16 * KIB, 0)                # server a, size 0
    rt.thread.device = 2                            # the current device: b1
    rt.select_device()
    assert rt.pointer_session(BASE) is a
    assert rt.pointer_session(BASE + 4 * KIB - 1) is a       # the byte at the end
    assert rt.pointer_session(BASE + 4 * KIB) is b           # the adjacent allocation's first
    assert rt.pointer_session(BASE + 8 * KIB - 1) is b
    rt.thread.device = 0
    rt.select_device()
    assert rt.pointer_session(BASE + 8 * KIB) is a           # one past: the current device's
    assert rt.pointer_session(BASE + 16 * KIB) is a          # a size-0 allocation holds its start
    rt.thread.device = 1
    rt.select_device()
    assert rt.pointer_session(BASE + 16 * KIB) is a
    assert rt.pointer_session(BASE + 16 * KIB + 1) is b      # past it: the current device's

