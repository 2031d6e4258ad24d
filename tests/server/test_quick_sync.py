"""On the emu backend, synchronising calls and queries are answered on the event loop once the
session's worker is idle (the device keeps no queue of its own). They must still wait for work
queued before them and still report the error an earlier asynchronous call left."""
from __future__ import annotations

import time

import pytest

from cricket.client.api import CudaError, connect


@pytest.fixture
def gpu(emu_server):
    with connect(emu_server.address, shared_memory=False) as conn:
        yield conn


def test_synchronize_waits_for_queued_copies(gpu):
    size = 3 << 20                                    # above the inline limit: runs on the worker
    buf = gpu.alloc(size)
    stream = gpu.create_stream()
    start, end = gpu.create_event(), gpu.create_event()
    try:
        start.record(stream)
        for value in range(1, 9):
            gpu.memcpy_htod(buf, bytes([value]) * size, stream=stream, sync=False)
        end.record(stream)
        end.synchronize()
        assert stream.query() and end.query()
        assert start.elapsed_time(end) >= 0.0
        gpu.synchronize()
        assert gpu.memcpy_dtoh(buf, 16) == bytes([8]) * 16
    finally:
        buf.free()


def test_an_asynchronous_error_is_reported_by_the_next_synchronize(gpu):
    buf = gpu.alloc(4096)
    try:
        gpu.memcpy_htod(buf, b"\1" * 8192, sync=False)    # past the allocation: fails on the worker
        time.sleep(0.3)                                  # the worker is idle again: the quick path
        with pytest.raises(CudaError, match="INVALID_VALUE"):
            gpu.synchronize()
        gpu.synchronize()                                # reported once
    finally:
        buf.free()


def test_an_unknown_stream_or_event_is_refused(gpu):
    stream = gpu.create_stream()
    stream.destroy()
    with pytest.raises(CudaError, match="INVALID_HANDLE"):
        stream.synchronize()
    event = gpu.create_event()
    event.destroy()
    with pytest.raises(CudaError, match="INVALID_HANDLE"):
        event.query()


@pytest.mark.parametrize("how", ["context", "stream", "event"])
def test_a_synchronize_right_behind_failing_work_waits_and_reports_it(gpu, how):
    size = 3 << 20
    buf = gpu.alloc(size)
    stream = gpu.create_stream()
    event = gpu.create_event()
    try:
        for value in range(1, 6):                       # keep the worker busy for a while
            gpu.memcpy_htod(buf, bytes([value]) * size, stream=stream, sync=False)
        gpu.memcpy_htod(buf, b"\1" * (size + 4096), stream=stream, sync=False)   # fails
        event.record(stream)
        with pytest.raises(CudaError, match="INVALID_VALUE"):
            {"context": gpu.synchronize, "stream": stream.synchronize, "event": event.synchronize}[how]()
    finally:
        buf.free()
