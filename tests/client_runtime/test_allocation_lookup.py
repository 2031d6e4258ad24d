"""Which device allocation an address falls in, at the edges (the byte at the end, one past it,
a size-0 allocation, two adjacent allocations), as each caller asks it: a device pointer or not
(``is_device``, ``cudaMemcpyDefault``), a copy that fits one allocation (``in_allocation``), and
the device of an allocation (``cudaPointerGetAttributes``, ``device_records.device_of``)."""
from __future__ import annotations

import ctypes
import mmap

import pytest

from cricket.client import device_records
from cricket.client.allocations import AllocationTable
from cricket.client.runtime import Runtime

KIB = 1024


@pytest.fixture
def rt() -> Runtime:
    return Runtime()


@pytest.fixture
def host_backed():
    """An address inside 8 MiB of host memory of this process: device allocations filed there get
    no address window or chunk (host pages lie there), so only the allocations classify a pointer."""
    region = mmap.mmap(-1, 8 << 20)
    pin = ctypes.c_char.from_buffer(region)
    address = ctypes.addressof(pin)
    del pin
    yield address + (1 << 20)
    region.close()


def test_is_device_at_the_edges_of_allocations(rt, host_backed):
    a = host_backed
    rt.add_allocation(a, 4 * KIB)
    rt.add_allocation(a + 4 * KIB, 4 * KIB)          # adjacent
    rt.add_allocation(a + 16 * KIB, 0)               # size 0
    assert not rt.address_windows.covers(a)          # (the premise: nothing reserved here)
    assert rt.is_device(a) and rt.is_device(a + 4 * KIB - 1)
    assert rt.is_device(a + 4 * KIB) and rt.is_device(a + 8 * KIB - 1)
    assert not rt.is_device(a + 8 * KIB)             # one past the second
    assert not rt.is_device(a - 1)
    assert not rt.is_device(a + 16 * KIB)            # a size-0 allocation holds no byte


def test_in_allocation_at_the_edges(rt):
    a = 0x6D00_0000_0000
    rt.add_allocation(a, 4 * KIB)
    rt.add_allocation(a + 4 * KIB, 4 * KIB)          # adjacent
    rt.add_allocation(a + 16 * KIB, 0)               # size 0
    assert rt.in_allocation(a, 4 * KIB)
    assert rt.in_allocation(a + 4 * KIB - 1, 1)      # the byte at the end
    assert not rt.in_allocation(a + 4 * KIB - 1, 2)  # across into the adjacent one: two allocations
    assert rt.in_allocation(a + 4 * KIB, 4 * KIB)
    assert not rt.in_allocation(a + 8 * KIB, 1)      # one past the end
    assert not rt.in_allocation(a - 1, 1)
    assert not rt.in_allocation(a + 16 * KIB, 1)     # size 0
    assert rt.remove_allocation(a) == 4 * KIB
    assert not rt.in_allocation(a, 1) and rt.in_allocation(a + 4 * KIB, 1)


def test_device_of_an_allocation_at_the_edges(rt):
    a = 0x6E00_0000_0000
    rt.thread.device = 1
    rt.add_allocation(a, 4 * KIB)
    rt.add_allocation(a + 16 * KIB, 0)               # size 0: its start is its own
    rt.thread.device = 2
    rt.add_allocation(a + 4 * KIB, 4 * KIB)          # adjacent, on another device
    rt.thread.device = 3                             # outside every allocation: the current device
    assert device_records.device_of(rt, a) == 1
    assert device_records.device_of(rt, a + 4 * KIB - 1) == 1
    assert device_records.device_of(rt, a + 4 * KIB) == 2
    assert device_records.device_of(rt, a + 8 * KIB) == 3
    assert device_records.device_of(rt, a + 16 * KIB) == 1
    assert device_records.device_of(rt, a + 16 * KIB + 1) == 3


def test_a_failed_free_keeps_the_allocation_and_its_device(rt):
    a = 0x6F00_0000_0000
    rt.thread.device = 1
    rt.add_allocation(a, 4 * KIB)
    rt.thread.device = 0

    def refuse():
        raise RuntimeError("the server refused")

    with pytest.raises(RuntimeError):
        rt.release_allocation(a, refuse)
    assert rt.in_allocation(a, 4 * KIB) and device_records.device_of(rt, a) == 1
    assert rt.release_allocation(a, lambda: None) and not rt.in_allocation(a, 1)


def test_an_overlap_is_found_at_either_end_and_not_beside():
    """What the routing of several servers checks a new allocation with (``overlapping``)."""
    table = AllocationTable()
    a = 0x7000_0000_0000
    table.add(a, 4 * KIB)
    assert table.overlapping(a + 4 * KIB, 4 * KIB) is None          # adjacent after
    assert table.overlapping(a - 4 * KIB, 4 * KIB) is None          # adjacent before
    assert table.overlapping(a + 4 * KIB - 1, 4 * KIB) == a         # shares the last byte
    assert table.overlapping(a - 4 * KIB, 4 * KIB + 1) == a         # shares the first byte
    assert table.overlapping(a - KIB, 8 * KIB) == a                 # covers it
