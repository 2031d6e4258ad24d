"""What a connection that never said HELLO may cost a shared server: record size, time, count."""
import time

import pytest

from cricket.client.api import connect
from cricket.rpc.errors import SystemErr

from attacks import (fragments_past_the_limit_before_hello, idle_connections_before_hello, large_record_before_hello,
                     silent_until_the_hello_timeout)
from hostile_peers import PLUGIN, closed_by_server, raw_connection, rss_bytes, server_help, wait_for_log


def served(server) -> bool:
    """A well-behaved client says HELLO and copies more than the pre-HELLO record limit both ways."""
    data = bytes(range(256)) * 4096                   # 1 MiB: records far above 64 KiB
    with connect(server.address) as conn:
        return conn.to_device(data).to_host() == data


def test_a_100_mib_record_header_before_hello_closes_the_connection_unbuffered(start_server):
    # A long HELLO timeout: only the record limit may close these connections within the test.
    server = start_server("--backend", PLUGIN, "--hello-timeout", "120")
    assert served(server)
    before = rss_bytes(server.process.pid)
    grown = []
    large_record_before_hello(server, while_open=lambda: grown.append(rss_bytes(server.process.pid) - before))
    assert grown[0] < 8 << 20, f"the server grew by {grown[0] >> 20} MiB"
    assert wait_for_log(server, "not authenticated yet")
    assert served(server)


def test_idle_connections_before_hello_cost_little_memory(start_server):
    server = start_server("--backend", PLUGIN, "--hello-timeout", "120")
    assert served(server)
    before = rss_bytes(server.process.pid)

    def accepted_and_small() -> None:
        deadline = time.monotonic() + 60           # every one accepted: a session opened for each
        while server.output().count(" opened (") < 201 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.output().count(" opened (") >= 201
        grown = rss_bytes(server.process.pid) - before
        assert grown < 16 << 20, f"200 idle connections grew the server by {grown >> 20} MiB"
        assert served(server)

    idle_connections_before_hello(server, 200, while_open=accepted_and_small)


def test_fragments_adding_up_past_the_limit_before_hello_close_the_connection(start_server):
    server = start_server("--backend", PLUGIN)
    fragments_past_the_limit_before_hello(server)
    assert served(server)


def test_a_connection_without_hello_is_closed_after_the_hello_timeout(start_server):
    server = start_server("--backend", PLUGIN, "--hello-timeout", "1")
    with connect(server.address) as conn:            # said HELLO: no timeout applies to it
        silent_until_the_hello_timeout(server)
        assert wait_for_log(server, "did not authenticate within 1 s")
        time.sleep(1.5)
        data = b"still served" * 10000
        assert conn.to_device(data).to_host() == data
    assert served(server)


def test_a_connection_over_max_sessions_is_closed_at_once(start_server):
    server = start_server("--backend", PLUGIN, "--max-sessions", "3")
    with connect(server.address) as conn:
        strangers = [raw_connection(server) for _ in range(2)]
        extra = raw_connection(server)
        assert closed_by_server(extra)                 # one that says nothing: after a short grace
        extra.close()
        assert wait_for_log(server, "limit of 3 connections is reached")
        with pytest.raises(SystemErr):                 # a client's HELLO: an RPC error, then closed
            connect(server.address)
        assert conn.to_device(b"x" * 100000).to_host() == b"x" * 100000
        for s in strangers:
            s.close()
        # A freed place serves the next client (the server learns of the closes asynchronously).
        deadline = time.monotonic() + 30
        while True:
            try:
                assert served(server)
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)


def test_help_shows_the_limits_and_their_defaults():
    text = server_help()
    assert "--max-sessions N" in text and "(default 256)" in text
    assert "--hello-timeout SECONDS" in text and "64 KiB (default 10)" in text
    assert "--allow-backend-import" in text
