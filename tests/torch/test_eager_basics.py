"""The eager basics of stock PyTorch through `cricket run` on emu, with no workaround: the device
and its properties, tensors to and from the device (pageable and pinned, synchronous and on a
stream), the caching allocator's accounting, streams, events and capture queries."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from .torch_support import run_under_cricket

LADDER = Path(__file__).with_name("ladder.py")


@pytest.fixture(scope="module")
def ladder() -> tuple[dict, str]:
    proc = run_under_cricket(str(LADDER))
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc.stderr


def test_torch_sees_the_server_device(ladder):
    seen, _ = ladder
    assert seen["available"] and seen["count"] == 1
    assert seen["name"] == seen["server"]["name"]
    assert seen["props"] == {key: seen["server"][key] for key in seen["props"]}


def test_tensors_travel_both_ways(ladder):
    seen, _ = ladder
    assert seen["pageable_round_trip"]
    assert seen["copy_into_device"]
    assert seen["device_to_device"]
    assert seen["pinned_on_stream"]


def test_memory_allocated_follows_the_caching_allocator(ladder):
    seen, _ = ladder
    assert seen["allocated_grew"] == 4 << 20
    assert seen["allocated_after_free"] == 0


def test_streams_and_events(ladder):
    seen, _ = ladder
    assert seen["event_query"] and seen["stream_query"]
    assert seen["elapsed_ms"] >= 0
    assert seen["capturing"] is False


def test_no_call_is_unimplemented_and_exit_is_clean(ladder):
    _, stderr = ladder
    assert "not implemented by cricket" not in stderr
    assert "unloading" not in stderr and "terminate called" not in stderr
