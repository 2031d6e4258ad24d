"""Work a client can make the server hold (issue 15, finding 6) against a real server: queued
asynchronous copies are bounded in bytes, not only in count; one module image is capped
(--max-image); an image that fails to load is not cached. The server's RSS, descriptors and
threads return to where they were."""
from __future__ import annotations

import os
import time

from cricket.client.api import connect
from cricket.server.limits import MAX_QUEUED_BYTES

from attacks import SPIN_PTX, copies_queued_behind_a_kernel, image_over_the_cap, junk_image, offer
from hostile_peers import assert_back_to, rss_bytes, warmed_up

MIB = 1 << 20


def test_async_copies_queued_behind_a_kernel_are_bounded_in_bytes(start_server):
    server = start_server("--backend", "emu")
    baseline = warmed_up(server)
    before = rss_bytes(server.process.pid)
    peaks = [before]

    def sample() -> None:
        deadline = time.monotonic() + 3.0                          # while the kernel runs
        while time.monotonic() < deadline:
            peaks.append(rss_bytes(server.process.pid))
            time.sleep(0.02)

    copies_queued_behind_a_kernel(server, while_queued=sample)
    grown = max(peaks) - before
    assert grown < MAX_QUEUED_BYTES + 48 * MIB, f"the server held {grown >> 20} MiB of queued copies"
    assert_back_to(server, baseline)


def test_an_image_that_fails_to_load_is_not_cached(start_server):
    server = start_server("--backend", "emu")
    baseline = warmed_up(server)
    junk_image(server)
    with connect(server.address) as attacker, connect(server.address) as other:
        good = other.load_module(SPIN_PTX)                         # a good one is cached
        assert offer(attacker, SPIN_PTX).status == 0 and good.get_function("spin")
    assert_back_to(server, baseline)


def test_an_image_over_the_cap_is_refused_and_the_server_keeps_serving(start_server):
    server = start_server("--backend", "emu", "--max-image", "1M")
    baseline = warmed_up(server)
    with connect(server.address) as victim:
        kept = os.urandom(MIB)
        buf = victim.to_device(kept)
        image_over_the_cap(server, MIB)
        assert victim.memcpy_dtoh(buf, MIB) == kept
        assert victim.load_module(SPIN_PTX).get_function("spin")
    assert_back_to(server, baseline)
