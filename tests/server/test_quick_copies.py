"""Small copies and allocations on the emu backend are answered on the event loop while the session's
worker is idle, and still never overtake work the session queued before them."""
from __future__ import annotations

import time

import pytest

from cricket.client.api import connect


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


def test_small_synchronous_copies_are_prompt(gpu):
    buf = gpu.alloc(4096)
    data = bytes(range(256)) * 16
    try:
        gpu.memcpy_htod(buf, data)
        t0 = time.perf_counter()
        for _ in range(200):
            gpu.memcpy_htod(buf, data)
            assert gpu.memcpy_dtoh(buf, 4096) == data
        per_call = (time.perf_counter() - t0) / 400
        assert per_call < 0.005                         # generous: ~0.1 ms on an idle machine
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
