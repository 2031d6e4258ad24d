"""Small copies and allocations on the emu backend are answered on the event loop while the session's
worker is idle, and still never overtake work the session queued before them."""
from __future__ import annotations

import os

import pytest

from cricket.client.api import CudaError, connect


@pytest.fixture
def gpu(emu_server):
    with connect(emu_server.address) as conn:
        yield conn


def test_small_copy_after_queued_async_copies_sees_the_last_one(gpu):
    buf = gpu.alloc(4096)
    try:
        for value in range(1, 200):                    # queued on the session's worker, no replies
            gpu.memcpy_htod(buf, bytes([value]) * 4096, sync=False)
        assert gpu.memcpy_dtoh(buf, 4096) == bytes([199]) * 4096
    finally:
        buf.free()


def test_small_copy_after_a_large_queued_copy_sees_it(gpu):
    big = 3 << 20                                      # above the inline limit: runs on the worker
    buf = gpu.alloc(big)
    try:
        gpu.memcpy_htod(buf, b"\x07" * big, sync=False)
        gpu.memcpy_htod(buf, b"\x09" * 16)             # small and synchronous: after the big one
        head = gpu.memcpy_dtoh(buf, 64)
        assert head == b"\x09" * 16 + b"\x07" * 48
    finally:
        buf.free()


def test_back_to_back_small_copies_each_see_the_last_write(gpu):
    # Answered on the event loop while the worker is idle: each read must see the write just before
    # it, not an older one (the speed of this path is measured in `cricket bench --only copy`).
    buf = gpu.alloc(4096)
    try:
        for i in range(200):
            data = bytes((i + k) % 256 for k in range(256)) * 16
            gpu.memcpy_htod(buf, data)
            assert gpu.memcpy_dtoh(buf, 4096) == data
    finally:
        buf.free()


def test_out_of_bounds_small_copy_is_refused_on_the_fast_path(gpu):
    buf = gpu.alloc(64)
    try:
        with pytest.raises(Exception, match="(?i)invalid|bound|range|past"):
            gpu.memcpy_htod(buf, b"\0" * 128)
        gpu.memcpy_htod(buf, b"\1" * 64)               # the session still works afterwards
        assert gpu.memcpy_dtoh(buf, 64) == b"\1" * 64
    finally:
        buf.free()


# Copies of 64 KiB and more over the socket go from the socket straight into the emu device memory
# (the server's payload sink for CR_MEMCPY_HTOD) while the session's worker is idle. Shared memory
# is off here: it would carry these copies on a server on the same host.

@pytest.fixture
def socket_gpu(emu_server):
    with connect(emu_server.address, shared_memory=False) as conn:
        yield conn


def test_large_copies_over_the_socket_land_in_device_memory(socket_gpu):
    size = 3 << 20
    buf = socket_gpu.alloc(size)
    data = os.urandom(size)
    try:
        socket_gpu.memcpy_htod(buf, data)
        assert socket_gpu.memcpy_dtoh(buf, size) == data
        socket_gpu.memcpy_htod(buf + 4096, data[:70_001])       # padded opaque, inside the buffer
        expected = data[:4096] + data[:70_001] + data[4096 + 70_001:4096 + 70_004]
        assert socket_gpu.memcpy_dtoh(buf, 4096 + 70_004) == expected
    finally:
        buf.free()


def test_a_large_copy_past_its_allocation_is_refused_and_writes_nothing(socket_gpu):
    a = socket_gpu.alloc(1 << 20)
    b = socket_gpu.alloc(1 << 20)
    try:
        socket_gpu.memcpy_htod(a, b"\0" * (1 << 20))
        with pytest.raises(CudaError, match="INVALID_VALUE"):
            socket_gpu.memcpy_htod(a + 4096, b"\5" * (1 << 20))
        assert socket_gpu.memcpy_dtoh(a, 1 << 20) == b"\0" * (1 << 20)
        socket_gpu.memcpy_htod(b, b"\6" * (1 << 20))                 # the session serves on
        assert socket_gpu.memcpy_dtoh(b, 8) == b"\6" * 8
    finally:
        a.free()
        b.free()


def test_a_large_copy_behind_queued_work_waits_for_it(socket_gpu):
    size = 1 << 20
    buf = socket_gpu.alloc(size)
    try:
        for value in range(1, 40):                    # queued on the session's worker
            socket_gpu.memcpy_htod(buf, bytes([value]) * size, sync=False)
        socket_gpu.memcpy_htod(buf, b"\x77" * (size // 2))     # synchronous: after all of them
        assert socket_gpu.memcpy_dtoh(buf, size) == b"\x77" * (size // 2) + bytes([39]) * (size // 2)
    finally:
        buf.free()
