"""The launch queue (``cext/launch_queue.pyx``) and its pure-Python twin queue the same call
records, refuse the same configurations, ask a device's limits once, and send the host's writes to
mapped memory before a launch that needs them."""
from __future__ import annotations

import ctypes
import importlib
import itertools

import pytest

from cricket.protocol import PROCEDURES, PROGRAM, VERSION
from cricket.rpc.auth import AuthNone
from cricket.rpc.client import Client

IMPLEMENTATIONS = ["cricket._cext.launch_queue", "cricket.client.launch_queue"]
LIMITS = (1024, 1024, 1024, 64, 0x7FFFFFFF, 65535, 65535, 49152)


class RecordingRpc:
    """The three calls of the RPC client the queue makes, with the real call head; the records it
    is given are kept instead of sent."""

    def __init__(self) -> None:
        self._auth_bytes = AuthNone().header_bytes()
        self.records: list[bytes] = []
        self.heads = 0
        self._xids = itertools.count(0x1000)

    def call_head(self, prog: int, vers: int, proc: int) -> bytes:
        self.heads += 1
        return Client.call_head(self, prog, vers, proc)   # type: ignore[arg-type]

    def next_xid(self) -> int:
        return next(self._xids)

    def queue_batched(self, record: bytes) -> None:
        self.records.append(record)


class Mapped:
    def __init__(self, ranges: list) -> None:
        self.ranges = ranges
        self.before: list[int] = []

    def before_launch(self, stream: int) -> None:
        self.before.append(stream)


class Stats:
    launches = 0


def _queue(module: str, mapped: Mapped | None = None):
    try:
        impl = importlib.import_module(module)
    except ImportError:
        pytest.skip(f"{module} is not built (make build)")
    asked: list[int] = []

    def limits_of(device: int) -> tuple:
        asked.append(device)
        return LIMITS
    stats = Stats()
    return impl.LaunchQueue(limits_of, mapped or Mapped([]), stats), asked, stats


def _launches(queue, rpc) -> list[bool]:
    a, b = ctypes.c_uint64(0xDEADBEEF), ctypes.c_int32(-7)
    args = (ctypes.c_void_p * 2)(ctypes.addressof(a), ctypes.addressof(b))
    layout = ((0, 8), (8, 4))
    return [queue.queue(rpc, 0, 7, 2 | 3 << 32, 4, 32 | 2 << 32, 1, 128, 9, ctypes.addressof(args), layout, 16),
            queue.queue(rpc, 1, 8, 1 | 1 << 32, 1, 1 | 1 << 32, 1, 0, 0, 0, (), 0),
            queue.queue(rpc, 0, 7, 1 | 1 << 32, 1, 2048 | 1 << 32, 1, 0, 0, 0, (), 0),   # too many threads
            queue.queue(rpc, 0, 7, 1 | 1 << 32, 1, 1 | 1 << 32, 1, 49153, 0, 0, (), 0)]  # too much shared


def test_compiled_and_twin_queue_the_same_records():
    got = []
    for module in IMPLEMENTATIONS:
        queue, asked, stats = _queue(module)
        rpc = RecordingRpc()
        got.append((_launches(queue, rpc), rpc.records, asked, stats.launches))
    assert got[0] == got[1]
    accepted, records, asked, launches = got[0]
    assert accepted == [True, True, False, False] and launches == 2 == len(records)
    assert asked == [0, 1]                               # once per device
    head = Client.call_head(RecordingRpc(), PROGRAM, VERSION, PROCEDURES["CR_LAUNCH_ASYNC"])
    first = records[0]
    assert int.from_bytes(first[:4], "big") == 0x80000000 | (len(first) - 4)
    assert first[4:8] == (0x1000).to_bytes(4, "big") and first[8:len(head)] == head[8:]


@pytest.mark.parametrize("module", IMPLEMENTATIONS)
def test_a_new_session_asks_limits_and_head_again(module):
    queue, asked, _ = _queue(module)
    rpc = RecordingRpc()
    _launches(queue, rpc)
    _launches(queue, rpc)
    assert rpc.heads == 1 and asked == [0, 1]
    queue.forget()
    other = RecordingRpc()
    _launches(queue, other)
    assert other.heads == 1 and asked == [0, 1, 0, 1]
    assert queue.limits(1) == LIMITS and asked == [0, 1, 0, 1]


@pytest.mark.parametrize("module", IMPLEMENTATIONS)
def test_mapped_memory_goes_before_the_launches_that_need_it(module):
    mapped = Mapped([])
    queue, _, _ = _queue(module, mapped)
    rpc = RecordingRpc()
    _launches(queue, rpc)
    assert mapped.before == []
    mapped.ranges.append((0x1000, 4096))
    _launches(queue, rpc)
    assert mapped.before == [9, 0]                       # the accepted launches' streams
