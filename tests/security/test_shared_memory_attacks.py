"""Attacks on the shared-memory path (issue 15, findings 1-3) against a real `cricket server`: a client
that shrinks its region, one that names or reaches for another session's region, one that plants a
hard link to another program's /dev/shm object. Each gets an error; the victim's data and the server
survive, and the server's RSS, descriptors and threads return to where they were."""
from __future__ import annotations

import secrets
import time

import pytest

from cricket.client.api import connect

from attacks import (hard_link_to_another_programs_object, reach_for_another_region, shrink_a_region,
                     silent_inbox_connections)
from hostile_peers import assert_back_to, resources, warmed_up


def _victim_round_trip(victim, buf) -> bool:
    """The victim copies 2 MiB through its region and reads it back."""
    data = secrets.token_bytes(2 << 20)
    victim.memcpy_htod(buf, data)
    return victim.memcpy_dtoh(buf, len(data)) == data


@pytest.fixture
def server(start_server):
    server = start_server("--backend", "emu")
    server.baseline = warmed_up(server)
    return server


def test_shrinking_a_region_after_attaching_fails_and_the_server_survives(server):
    with connect(server.address) as victim:
        vbuf = victim.to_device(bytes(2 << 20))
        assert victim._shm_region
        shrink_a_region(server)
        assert _victim_round_trip(victim, vbuf)
    assert_back_to(server, server.baseline)


def test_a_client_cannot_name_guess_or_reuse_its_way_into_another_sessions_region(server):
    with connect(server.address) as victim:
        kept = secrets.token_bytes(2 << 20)
        vbuf = victim.to_device(kept)
        assert victim._shm_region
        reach_for_another_region(server, vbuf.device_ptr)
        assert victim.memcpy_dtoh(vbuf, len(kept)) == kept
        assert _victim_round_trip(victim, vbuf)
    assert_back_to(server, server.baseline)


def test_a_hard_link_to_another_programs_shm_object_is_never_mapped(server):
    hard_link_to_another_programs_object(server)
    assert_back_to(server, server.baseline)


def test_silent_inbox_connections_are_bounded_and_closed(server):
    from cricket.server.fd_inbox import MAX_CONNECTIONS
    baseline = server.baseline
    held = []

    def bounded() -> None:
        time.sleep(0.5)
        held.append(resources(server.process.pid)[1])

    with connect(server.address) as victim:
        silent_inbox_connections(server, while_open=bounded)
        # the attacker's own session holds a few descriptors besides the inbox's connections
        assert held[0] <= baseline[1] + MAX_CONNECTIONS + 4
        vbuf = victim.to_device(bytes(2 << 20))
        assert _victim_round_trip(victim, vbuf)
    assert_back_to(server, baseline)
