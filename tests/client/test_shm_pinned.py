"""Pinned host memory the server maps (``cricket.client.shm_pinned``), as clients see it: the Python
API's ``HostBuffer`` copies every size class byte for byte, the server maps each allocation until it
is freed, a refusing server or the server's bounds leave ordinary memory (one warning) and copies
still right, and a forked child's pinned memory is its own. Real `cricket server` processes (emu).
"""
from __future__ import annotations

import logging

import pytest

from cricket.client import shm_pinned
from cricket.client.api import connect
from cricket.client.local_server import LocalServer

MIB = 1 << 20
SIZES = [1, 4095, 64 * 1024 + 3, 5 * MIB + 7]


def _pattern(size: int, seed: int) -> bytes:
    return (bytes(range(seed % 251, 256)) + bytes(range(256)) * (size // 256 + 2))[:size]


def _pinned_mappings(pid: int) -> int:
    with open(f"/proc/{pid}/maps") as f:
        return sum(1 for line in f if "cricket-shm-pinned-" in line)


@pytest.fixture(scope="module")
def emu_server():
    with LocalServer(["emu"]) as server:
        yield server


@pytest.mark.parametrize("size", SIZES)
def test_host_buffer_copies_move_the_bytes_and_the_server_maps_it_until_freed(emu_server, size):
    server_pid = emu_server.process.pid
    with connect(emu_server.address) as gpu:
        before = _pinned_mappings(server_pid)
        dev = gpu.alloc(size + 3)
        host = gpu.alloc_host(size)
        assert host.address is not None
        assert _pinned_mappings(server_pid) == before + 1
        data = _pattern(size, size)
        host.view[:] = data
        gpu.memcpy_htod(dev + 3, host)
        assert gpu.memcpy_dtoh(dev + 3, size) == data
        gpu.memcpy_htod(dev, data[::-1])
        host.view[:] = bytes(size)
        assert gpu.memcpy_dtoh(dev, size, into=host) is host
        assert host.view == data[::-1]
        host.free()
        assert _pinned_mappings(server_pid) == before          # CR_SHM_DETACH_PINNED answered


def test_with_shared_memory_off_host_buffers_are_ordinary_memory(emu_server, monkeypatch):
    monkeypatch.setenv("CRICKET_SHM", "0")
    with connect(emu_server.address) as gpu, gpu.alloc_host(MIB) as host:
        assert host.address is None
        data = _pattern(MIB, 3)
        host.view[:] = data
        dev = gpu.alloc(MIB)
        gpu.memcpy_htod(dev, host)
        assert gpu.memcpy_dtoh(dev, MIB) == data


def test_past_the_servers_bound_allocations_are_ordinary_memory_with_one_warning(caplog):
    caplog.set_level(logging.WARNING, logger="cricket.client.shm_pinned")
    with LocalServer(["emu"], env={"CRICKET_PINNED_REGIONS": "1"}) as server, connect(server.address) as gpu:
        hosts = [gpu.alloc_host(8192) for _ in range(3)]
        assert [h.address is not None for h in hosts] == [True, False, False]
        dev = gpu.alloc(8192)
        for i, host in enumerate(hosts):
            data = _pattern(8192, i)
            host.view[:] = data
            gpu.memcpy_htod(dev, host)
            assert gpu.memcpy_dtoh(dev, 8192) == data
        hosts[0].free()
        again = gpu.alloc_host(4096)                # the bound's room came back
        assert again.address is not None
    warnings = [r.getMessage() for r in caplog.records if r.name == "cricket.client.shm_pinned"]
    assert len(warnings) == 1 and "CRICKET_PINNED_REGIONS" in warnings[0]


def test_a_forked_childs_pinned_memory_is_its_own(emu_server, in_forked_child):
    gpu = connect(emu_server.address)
    try:
        host = gpu.alloc_host(MIB)
        data = _pattern(MIB, 5)
        host.view[:] = data

        def child_check() -> bool:
            shm_pinned.forked(gpu)
            ok = host.view == data                      # the bytes stayed
            host.view[:] = bytes(MIB)                   # ... and are the child's alone now
            with connect(emu_server.address) as child:
                dev = child.alloc(MIB)
                child.memcpy_htod(dev, host)
                return ok and child.memcpy_dtoh(dev, MIB) == bytes(MIB)

        assert in_forked_child(child_check)
        assert host.view == data                            # the child's writes did not reach us
        dev = gpu.alloc(MIB)
        gpu.memcpy_htod(dev, host)
        assert gpu.memcpy_dtoh(dev, MIB) == data
        host.free()
    finally:
        gpu.close()
