"""CRICKET_SPIN_US: a client thread waiting for a reply polls the socket that long (default 100 µs)
before it sleeps, giving its CPU away between polls unless told to spin, and stops polling for a
while when a yield comes back late. Replies that come within it, after it, and a server that goes
away while it polls are all handled as without it."""
from __future__ import annotations

import logging
import os
import time

import pytest

from cricket.rpc import Client, RpcConnectionError, RpcTimeout, Server, ServerThread
from cricket.rpc import client as client_module, contention, rpc_call, socket_poll
from cricket.rpc.client import spin_seconds
from rpc_calc import CALC_PROG, CalcClient, CalcV1


@pytest.mark.parametrize(("value", "seconds"), [("", 100e-6), ("0", 0.0), ("150", 150e-6),
                                                ("-5", 0.0), ("1e9", 0.01), ("nan", 100e-6)])
def test_the_setting_is_microseconds_100_by_default_and_bounded(monkeypatch, value, seconds):
    monkeypatch.setenv("CRICKET_SPIN_US", value)
    assert spin_seconds() == pytest.approx(seconds)


def test_a_setting_that_is_not_a_number_is_ignored_with_a_warning(monkeypatch, caplog):
    monkeypatch.setenv("CRICKET_SPIN_US", "fast")
    with caplog.at_level(logging.WARNING):
        assert spin_seconds() == pytest.approx(100e-6)
    assert "CRICKET_SPIN_US" in caplog.text


def _yields_while_waiting(rpc, monkeypatch) -> int:
    """sched_yield calls while the client waits 30 ms for a reply."""
    calls = []
    real = os.sched_yield
    monkeypatch.setattr(os, "sched_yield", lambda: calls.append(1) or real())
    CalcClient(rpc).SLEEP(30)
    monkeypatch.setattr(os, "sched_yield", real)
    return len(calls)


def test_a_polling_client_gives_its_cpu_away_unless_told_to_spin(monkeypatch, unix_server):
    # The pure-Python call path and poll, whose os.sched_yield calls can be counted (the compiled
    # ones call sched_yield in C on the same condition: tests/rpc/test_rpc_socket_poll.py).
    monkeypatch.setattr(client_module, "wait_readable", socket_poll.wait_readable)
    monkeypatch.setattr(client_module, "CallPath", rpc_call.CallPath)
    monkeypatch.setenv("CRICKET_SPIN_US", "5000")
    socket_poll.pause_polling(0.0)      # a busy machine may have paused it before
    with Client(unix_server.address, timeout=10) as rpc:
        assert _yields_while_waiting(rpc, monkeypatch) > 0          # the default: poll, yielding
        rpc.set_polling(0.005, yield_cpu=False)                      # spin: poll, keep the CPU
        assert _yields_while_waiting(rpc, monkeypatch) == 0
        rpc.set_polling(0)                                           # block in the read at once
        assert _yields_while_waiting(rpc, monkeypatch) == 0
        assert rpc._spin == 0
        rpc.set_polling(1.0)
        assert rpc._spin == pytest.approx(0.01)                      # bounded as the setting is


def test_a_yield_that_gave_the_cpu_away_stops_the_polling_for_a_while(monkeypatch, unix_server):
    """Each yield comes back after someone else's time slice: the first ends the wait's polling,
    and the calls after it sleep in their reads at once until the pause is over."""
    monkeypatch.setattr(client_module, "wait_readable", socket_poll.wait_readable)
    monkeypatch.setattr(client_module, "CallPath", rpc_call.CallPath)
    monkeypatch.setenv("CRICKET_SPIN_US", "5000")
    monkeypatch.setattr(contention, "CONTENDED_PAUSE", 600.0)
    yields = []

    def someone_elses_slice() -> None:
        yields.append(1)
        time.sleep(2 * contention.CONTENDED_YIELD)
    socket_poll.pause_polling(0.0)
    monkeypatch.setattr(os, "sched_yield", someone_elses_slice)
    try:
        with Client(unix_server.address, timeout=10) as rpc:
            calc = CalcClient(rpc)
            calc.SLEEP(30)
            assert yields == [1]                        # one late yield ended the polling ...
            assert [calc.ADD(i, i) for i in range(20)] == [2 * i for i in range(20)]
            calc.SLEEP(30)
            assert yields == [1]                        # ... and no wait polled in the pause
            socket_poll.pause_polling(0.0)
            calc.SLEEP(30)
            assert yields == [1, 1]                     # after it, waits poll again
    finally:
        socket_poll.pause_polling(0.0)


@pytest.fixture
def polling(monkeypatch):
    monkeypatch.setenv("CRICKET_SPIN_US", "300")


def test_quick_slow_and_large_replies_arrive_while_polling(polling, unix_server):
    with Client(unix_server.address, timeout=10) as rpc:
        assert rpc._spin == pytest.approx(300e-6)
        calc = CalcClient(rpc)
        assert [calc.ADD(i, 1) for i in range(200)] == [i + 1 for i in range(200)]
        calc.SLEEP(20)                                   # longer than the polling: then it sleeps
        payload = bytes(range(256)) * 4096
        assert bytes(calc.ECHO(payload)) == payload
        pending = [rpc.start(CALC_PROG, 1, 1, [(i).to_bytes(4, "big"), b"\0\0\0\1"]) for i in range(20)]
        assert [int.from_bytes(p.result()[:4], "big") for p in pending] == list(range(1, 21))


def test_a_timeout_still_applies_while_polling(polling, unix_server):
    with Client(unix_server.address, timeout=0.2) as rpc:
        t0 = time.monotonic()
        with pytest.raises(RpcTimeout):
            CalcClient(rpc).SLEEP(1000)
        assert time.monotonic() - t0 < 0.9


def test_a_server_that_goes_away_while_the_client_polls_is_reported(polling):
    st = ServerThread(Server([CalcV1()])).start()
    rpc = Client(st.address, timeout=10)
    assert CalcClient(rpc).ADD(1, 2) == 3
    pending = rpc.start(CALC_PROG, 1, 6, [b"\0\0\x03\xe8"])   # SLEEP 1000 ms
    st.stop()
    with pytest.raises(RpcConnectionError, match="closed the connection"):
        pending.result()
    rpc.close()
