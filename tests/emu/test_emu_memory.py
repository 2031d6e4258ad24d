"""The device arena: allocation, copies, memsets, and the allocation table."""
import os

import numpy as np
import pytest

from cricket.backends.emu import EmuDevice, EmuError
from cricket.backends.emu.memory import GLOBAL_BASE


def rss_kib() -> int:
    with open(f"/proc/{os.getpid()}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def test_pointers_look_like_device_pointers_and_are_aligned(runner):
    ptrs = [runner.dev.mem_alloc(n) for n in (1, 100, 4096, 1 << 20)]
    assert all(p >= GLOBAL_BASE and p % 256 == 0 for p in ptrs)
    assert len(set(ptrs)) == 4


def test_freed_memory_is_reused_and_neighbours_coalesce(runner):
    a = runner.dev.mem_alloc(1000)
    b = runner.dev.mem_alloc(1000)
    runner.dev.mem_free(a)
    runner.dev.mem_free(b)
    c = runner.dev.mem_alloc(2000)           # fits only after a and b merged
    assert c == a


def test_copies_and_memsets_round_trip(runner, rng):
    data = rng.integers(0, 256, 10000, dtype=np.uint8)
    p = runner.put(data)
    assert runner.dev.memcpy_dtoh(p, 10000) == data.tobytes()
    q = runner.dev.mem_alloc(10000)
    runner.dev.memcpy_dtod(q, p, 10000)
    assert runner.dev.memcpy_dtoh(q, 10000) == data.tobytes()
    runner.dev.memset_d8(q, 0xAB, 10)
    runner.dev.memset_d32(q + 12, 0xDEADBEEF, 3)
    out = runner.get(q, 24, np.uint8)
    assert (out[:10] == 0xAB).all() and list(out[10:12]) == list(data[10:12])
    assert list(out[12:24].view(np.uint32)) == [0xDEADBEEF] * 3


def test_copies_outside_an_allocation_are_refused_before_touching_memory(runner):
    p = runner.dev.mem_alloc(100)
    with pytest.raises(EmuError) as e:
        runner.dev.memcpy_htod(p + 50, bytes(100))
    assert e.value.code == 1
    with pytest.raises(EmuError):
        runner.dev.memcpy_dtoh(p - 256, 10)
    with pytest.raises(EmuError):
        runner.dev.mem_free(p + 8)
    runner.dev.mem_free(p)
    with pytest.raises(EmuError):
        runner.dev.mem_free(p)           # double free


def test_mem_get_info_tracks_allocations(runner):
    free0, total = runner.dev.mem_get_info()
    p = runner.dev.mem_alloc(1 << 20)
    free1, _ = runner.dev.mem_get_info()
    assert free0 - free1 == 1 << 20 and total == 1 << 30
    runner.dev.mem_free(p)
    assert runner.dev.mem_get_info()[0] == free0


def test_out_of_memory_is_reported():
    dev = EmuDevice(arena_size=1 << 20)
    try:
        with pytest.raises(EmuError) as e:
            dev.mem_alloc(2 << 20)
        assert e.value.code == 2
    finally:
        dev.close()


def test_large_arena_costs_nothing_until_touched():
    before = rss_kib()
    dev = EmuDevice(arena_size=64 << 30)         # 64 GiB of address space
    try:
        p = dev.mem_alloc(32 << 30)
        dev.memset_d8(p, 1, 1 << 20)             # touch 1 MiB of it
        assert rss_kib() - before < 64 * 1024    # far below what was reserved
        assert dev.device_properties()["totalGlobalMem"] == 64 << 30
    finally:
        dev.close()


def test_device_properties_state_emulation(runner):
    props = runner.dev.device_properties()
    assert props["emulated"] is True and "emu" in props["name"]
    assert (props["major"], props["minor"]) == (7, 5)
    assert props["warpSize"] == 32 and props["maxThreadsPerBlock"] == 1024
