"""The shared ledger of ``cricket server --workers N`` when a process died holding its lock: the
next call that needs it fails after the ledger's lock timeout with LedgerStuck (not a hang), and
the server answers the client's call with an error reply and keeps serving what needs no ledger.
The timeout is the ledger's ``lock_timeout`` (5 s by default), made short here."""
from __future__ import annotations

import multiprocessing
import os
import signal

import pytest

from cricket.client.api import CudaError, connect
from cricket.cudafacts import curesult
from cricket.rpc import ServerThread
from cricket.server import ledger as ledger_module
from cricket.server.app import ServerConfig, build, load_backends
from cricket.server.ledger import DEVICE_MEMORY, LOCK_TIMEOUT, SESSIONS, Ledger, LedgerStuck
from cricket.backends.registry import BackendRegistry

TIMEOUT = 0.3     # seconds: the injected lock timeout


def _hold(ledger: Ledger, ready) -> None:
    """In a forked process: take the ledger's lock, say so, and wait to be killed."""
    ledger._lock.acquire()
    ready.send("held")
    signal.pause()


@pytest.fixture
def stuck_ledger() -> Ledger:
    """A shared ledger whose lock a forked process took and then was killed with SIGKILL."""
    ledger = Ledger.shared(lock_timeout=TIMEOUT)
    ctx = multiprocessing.get_context("fork")
    ours, theirs = ctx.Pipe()
    holder = ctx.Process(target=_hold, args=(ledger, theirs), daemon=True)
    holder.start()
    assert ours.poll(60) and ours.recv() == "held"
    os.kill(holder.pid, signal.SIGKILL)
    holder.join(60)
    assert holder.exitcode == -signal.SIGKILL
    return ledger


def test_the_lock_timeout_defaults_to_five_seconds():
    assert LOCK_TIMEOUT == 5.0 and Ledger.shared().lock_timeout == LOCK_TIMEOUT == Ledger().lock_timeout


@pytest.mark.timeout(60)
def test_a_lock_left_by_a_killed_process_fails_the_next_call_instead_of_hanging(stuck_ledger):
    with pytest.raises(LedgerStuck, match=r"stayed locked for 0\.3 s \(a worker died holding it\); restart") as err:
        stuck_ledger.take(((DEVICE_MEMORY, 4096, None),))
    assert err.value.code == curesult.UNKNOWN
    assert stuck_ledger.value(DEVICE_MEMORY) == 0            # nothing was counted
    # Once stuck, later calls fail without waiting again: a wait of an hour would hang this test.
    stuck_ledger.lock_timeout = 3600
    with pytest.raises(LedgerStuck):
        stuck_ledger.give(DEVICE_MEMORY, 4096)
    with pytest.raises(LedgerStuck):
        stuck_ledger.take(((SESSIONS, 1, 10),))


@pytest.mark.timeout(120)
def test_the_server_answers_an_allocation_on_a_stuck_ledger_with_an_error(stuck_ledger, tmp_path, caplog):
    registry = BackendRegistry()
    assert load_backends(registry, ["emu"], strict=True) == []
    _, _, server = build(ServerConfig(backends=["emu"]), registry, ledger=stuck_ledger)
    socket_path = str(tmp_path / "cricket.sock")
    with ServerThread(server, socket_path) as running, connect(socket_path) as conn:
        for _ in range(2):                                   # the first waits, the second does not
            with pytest.raises(CudaError) as err:
                conn.alloc(4096)
            assert err.value.code == curesult.UNKNOWN
            assert "server-wide ledger stayed locked" in err.value.message
            assert "\n" not in err.value.message
        stream = conn.create_stream()                        # what needs no ledger still works
        stream.synchronize()
        stream.destroy()
        assert running._thread.is_alive()
    stuck = [r for r in caplog.records if r.name == ledger_module.__name__]
    assert len(stuck) == 1 and stuck[0].levelname == "ERROR" and stuck[0].exc_info is None
    assert not [r for r in caplog.records if r.exc_info]     # no traceback logged anywhere


@pytest.mark.timeout(60)
def test_a_worker_refuses_a_connection_on_a_stuck_ledger_and_still_frees_a_closed_session(stuck_ledger,
                                                                                          monkeypatch):
    from cricket.rpc import Server
    from cricket.server.workers import _share_sessions
    monkeypatch.setattr(ledger_module, "SERVER", stuck_ledger)
    freed = []
    server = Server([], on_disconnect=freed.append)
    _share_sessions(server, 8)
    assert server.take_seat() is False          # refused (the RPC server answers SYSTEM_ERR), not raised
    server.on_disconnect(7)                     # a session that had its seat before: freed anyway
    assert freed == [7]
