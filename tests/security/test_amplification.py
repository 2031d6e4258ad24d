"""Work a client can make the server hold (issue 15, finding 6) against a real server: queued
asynchronous copies are bounded in bytes, not only in count; one module image is capped
(--max-image); an image that fails to load is not cached. The server's RSS, descriptors and
threads return to where they were."""
from __future__ import annotations

import hashlib
import os
import threading
import time

import pytest

from cricket.client.api import CudaError, connect
from cricket.cudafacts import curesult
from cricket.protocol import gen as P
from cricket.server.limits import MAX_QUEUED_BYTES

from hostile_peers import assert_back_to, rss_bytes, warmed_up

MIB = 1 << 20
# One thread spinning: a kernel whose length the test sets by its trip count.
SPIN_PTX = b""".version 7.0
.target sm_50
.address_size 64
.visible .entry spin(.param .u64 trips)
{
    .reg .pred %p;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [trips];
    mov.u64 %rd2, 0;
LOOP:
    add.u64 %rd2, %rd2, 1;
    setp.lt.u64 %p, %rd2, %rd1;
    @%p bra LOOP;
    ret;
}
"""


def _spin_for(spin, seconds: float) -> int:
    """Trips that make ``spin`` run at least ``seconds``."""
    trips = 1000
    while True:
        t0 = time.perf_counter()
        spin.launch(1, 1, [trips], sync=True)
        took = time.perf_counter() - t0
        if took > 0.2:
            return int(trips * seconds / took) + 1
        trips *= 4


def test_async_copies_queued_behind_a_kernel_are_bounded_in_bytes(start_server):
    server = start_server("--backend", "emu")
    baseline = warmed_up(server)
    with connect(server.address, shared_memory=False) as conn:
        spin = conn.load_module(SPIN_PTX).get_function("spin")
        trips = _spin_for(spin, 4.0)
        buf = conn.alloc(4 * MIB)
        chunks = [bytes([i]) * (4 * MIB) for i in range(64)]       # 256 MiB, 64 calls: far under the count
        before = rss_bytes(server.process.pid)
        spin.launch(1, 1, [trips])
        sender = threading.Thread(target=lambda: [conn.memcpy_htod(buf, c, sync=False) for c in chunks])
        sender.start()
        peak = before
        deadline = time.monotonic() + 3.0                          # while the kernel runs
        while time.monotonic() < deadline:
            peak = max(peak, rss_bytes(server.process.pid))
            time.sleep(0.02)
        sender.join(120)
        assert not sender.is_alive()
        conn.synchronize()
        assert conn.memcpy_dtoh(buf, 4 * MIB) == chunks[-1]
    grown = peak - before
    assert grown < MAX_QUEUED_BYTES + 48 * MIB, f"the server held {grown >> 20} MiB of queued copies"
    assert_back_to(server, baseline)


def _load_raw(conn, image: bytes, kind: int = P.CR_IMAGE_PTX):
    return conn._stub.CR_MODULE_LOAD(P.cr_module_load_args(hash=hashlib.sha256(image).digest(),
                                                           kind=kind, image=image))


def test_an_image_that_fails_to_load_is_not_cached(start_server):
    server = start_server("--backend", "emu")
    baseline = warmed_up(server)
    junk = b".version 7.0\n.target sm_50\n.address_size 64\n" + os.urandom(2 * MIB)
    with connect(server.address) as attacker, connect(server.address) as other:
        res = _load_raw(attacker, junk)
        assert res.status == curesult.INVALID_PTX
        offer = other._stub.CR_MODULE_LOAD(P.cr_module_load_args(
            hash=hashlib.sha256(junk).digest(), kind=P.CR_IMAGE_PTX, image=b""))
        assert offer.status == P.CRICKET_NEED_IMAGE             # the server does not hold it
        good = other.load_module(SPIN_PTX)                         # a good one is cached
        again = attacker._stub.CR_MODULE_LOAD(P.cr_module_load_args(
            hash=hashlib.sha256(SPIN_PTX).digest(), kind=P.CR_IMAGE_PTX, image=b""))
        assert again.status == 0 and good.get_function("spin")
    assert_back_to(server, baseline)


def test_an_image_over_the_cap_is_refused_and_the_server_keeps_serving(start_server):
    server = start_server("--backend", "emu", "--max-image", "1M")
    baseline = warmed_up(server)
    with connect(server.address) as victim:
        kept = os.urandom(MIB)
        buf = victim.to_device(kept)
        with connect(server.address) as attacker:
            res = _load_raw(attacker, SPIN_PTX + b"\n" * (MIB + 1000))        # over the cap, in the record
            assert res.status == curesult.INVALID_VALUE and "--max-image" in res.message
            with pytest.raises((ConnectionError, OSError, CudaError)):          # past the record limit
                _load_raw(attacker, SPIN_PTX + b"\n" * (8 * MIB))
        assert victim.memcpy_dtoh(buf, MIB) == kept
        assert victim.load_module(SPIN_PTX).get_function("spin")
    assert_back_to(server, baseline)
