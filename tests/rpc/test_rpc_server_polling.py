"""Server(poll=...): after bytes arrive the event loop keeps polling for that long instead of
sleeping, yielding its thread's CPU between polls, and stops once the window has passed; calls are
answered as without it (on uvloop and on asyncio)."""
from __future__ import annotations

import os
import threading
import time

import pytest

from cricket.rpc import Client, Server, ServerThread
from rpc_calc import CalcClient, CalcV1

@pytest.fixture
def yields(monkeypatch):
    """sched_yield calls made by the server's thread."""
    calls: list[float] = []
    real = os.sched_yield

    def counting() -> None:
        if threading.current_thread().name == "cricket-rpc-server":
            calls.append(time.perf_counter())
        real()
    monkeypatch.setattr(os, "sched_yield", counting)
    return calls


def test_the_loop_polls_for_the_window_after_a_call_then_sleeps(tmp_path, yields, loop_factory):
    server = Server([CalcV1()], poll=0.02)
    with ServerThread(server, str(tmp_path / "calc.sock"), loop_factory=loop_factory) as st, \
            Client(st.address, timeout=10) as rpc:
        calc = CalcClient(rpc)
        assert [calc.ADD(i, i) for i in range(50)] == [2 * i for i in range(50)]
        last_call = time.perf_counter()
        assert bytes(calc.ECHO(b"x" * 100_000)) == b"x" * 100_000
        time.sleep(0.2)
        seen = len(yields)
        assert seen > 0                                     # it polled after the calls ...
        assert max(yields) - last_call < 0.15               # ... and stopped after the window
        time.sleep(0.1)
        assert len(yields) == seen                          # asleep now: no polling without calls
        assert calc.ADD(1, 2) == 3                          # and a call wakes it as ever
        time.sleep(0.1)
        assert len(yields) > seen


def test_without_a_window_the_loop_never_polls(tmp_path, yields):
    with ServerThread(Server([CalcV1()]), str(tmp_path / "calc.sock")) as st, \
            Client(st.address, timeout=10) as rpc:
        calc = CalcClient(rpc)
        assert [calc.ADD(i, 1) for i in range(50)] == [i + 1 for i in range(50)]
        time.sleep(0.05)
    assert yields == []


def test_a_yield_that_gave_the_cpu_away_stops_the_polling_for_a_while(tmp_path, monkeypatch, loop_factory):
    """A sched_yield that returns late (another process ran: a busy machine) ends the window at
    once, and no call polls again until CONTENDED_PAUSE has passed; the calls are answered."""
    from cricket.rpc import contention
    calls: list[float] = []
    real = os.sched_yield

    def busy_machine() -> None:          # each yield comes back after someone else's time slice
        if threading.current_thread().name == "cricket-rpc-server":
            calls.append(time.perf_counter())
            time.sleep(2 * contention.CONTENDED_YIELD)
        real()
    monkeypatch.setattr(os, "sched_yield", busy_machine)
    monkeypatch.setattr(contention, "CONTENDED_PAUSE", 0.5)
    server = Server([CalcV1()], poll=0.05)
    with ServerThread(server, str(tmp_path / "calc.sock"), loop_factory=loop_factory) as st, \
            Client(st.address, timeout=10) as rpc:
        calc = CalcClient(rpc)
        started = time.perf_counter()
        assert [calc.ADD(i, i) for i in range(20)] == [2 * i for i in range(20)]
        within_pause = time.perf_counter() - started < 0.5
        assert len(calls) == 1 or not within_pause          # one yield, then no polling in the pause
        time.sleep(0.6)
        assert calc.ADD(2, 2) == 4                          # after the pause it polls again
        time.sleep(0.05)
        assert len(calls) >= 2
