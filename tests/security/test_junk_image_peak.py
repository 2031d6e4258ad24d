"""The junk "PTX" upload of issue 15 (finding 6) under the default 256 MiB --max-image: one over the
cap is cut off before it is buffered; one just under it is received, fails with
CUDA_ERROR_INVALID_PTX, and the server's peak memory stays within a stated multiple of the image
(its peak resident set from /proc, VmHWM), then returns, and nothing of it is cached."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from cricket.client.api import CudaError, connect
from cricket.cudafacts import curesult
from cricket.protocol import gen as P

from attacks import load_raw, offer
from hostile_peers import assert_back_to, rss_bytes, warmed_up

MIB = 1 << 20
HEADER = b".version 7.0\n.target sm_50\n.address_size 64\n"
UNDER_CAP = 250 * MIB
SLACK = 64 * MIB
# What the server may hold at the peak: the received record and the call's image argument (two
# copies of the image), and for text its decoded string (a third); then the parser stops at the
# junk. Binary junk is refused before it is decoded.
BINARY_BOUND = 2 * UNDER_CAP + SLACK
TEXT_BOUND = 3 * UNDER_CAP + SLACK
# Text that tokenizes as PTX (words, numbers, braces, punctuation): the worst case for the parser.
_TEXT = (b"abcdefgh ijklmnop\nqrstuvwx yz.;,{}[]%0123456789 " * 6)[:256]


def peak_rss(pid: int) -> int:
    """The highest resident set the process had so far (VmHWM)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmHWM in /proc/{pid}/status")


def test_junk_images_over_and_under_the_cap_keep_the_servers_peak_bounded(start_server):
    server = start_server("--backend", "emu")
    baseline = warmed_up(server)
    pid = server.process.pid
    start = rss_bytes(pid)

    noise = os.urandom(MIB)                      # junk is junk: one random MiB, repeated
    over = HEADER + noise * 300
    with connect(server.address, shared_memory=False) as attacker:
        with pytest.raises((ConnectionError, OSError, CudaError)):    # past the record limit
            load_raw(attacker, over)
    del over
    assert peak_rss(pid) - start < SLACK, f"a refused 300 MiB upload peaked at +{(peak_rss(pid) - start) >> 20} MiB"

    binary = HEADER + noise * (UNDER_CAP // MIB)
    text = HEADER + noise.translate(_TEXT) * (UNDER_CAP // MIB)
    for junk, bound in ((binary, BINARY_BOUND), (text, TEXT_BOUND)):     # the smaller peak first
        with connect(server.address, shared_memory=False) as attacker:
            res = load_raw(attacker, junk)
            assert res.status == curesult.INVALID_PTX, res.message
            assert offer(attacker, junk).status == P.CRICKET_NEED_IMAGE     # not cached
        grown = peak_rss(pid) - start
        assert grown < bound, f"a {len(junk) >> 20} MiB junk image peaked at +{grown >> 20} MiB (bound {bound >> 20})"
    del binary, text
    assert_back_to(server, baseline)
