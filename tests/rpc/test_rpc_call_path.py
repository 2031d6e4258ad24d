"""The blocking call path, compiled (``cricket._cext.rpc_call``) and its pure-Python twin
(``cricket.rpc.rpc_call``): each runs the same calls against the same real servers, and both must
give the same results and the same errors, for quick replies, large ones (received in place, sent
in parts), replies in many fragments, replies read on behalf of other calls, timeouts, interrupted
waits and a server that goes away."""
from __future__ import annotations

import importlib
import signal
import threading

import pytest

from cricket._select import pure_python_forced
from cricket.rpc import Client, RecordTooLarge, Server, ServerThread, client as client_module
from cricket.rpc.errors import RpcConnectionError, RpcError, RpcTimeout
from rpc_calc import CALC_PROG, CalcClient, CalcV1

IMPLEMENTATIONS = ["cricket._cext.rpc_call", "cricket.rpc.rpc_call"]


def _import(name: str):
    """The implementation, or a skip: the compiled one reads with the compiled record reader, which
    CRICKET_PUREPYTHON=1 replaces by its twin."""
    if name.startswith("cricket._cext") and pure_python_forced():
        pytest.skip("CRICKET_PUREPYTHON=1: the compiled call path needs the compiled record reader")
    try:
        return importlib.import_module(name)
    except ImportError:
        pytest.skip(f"{name} is not built (make build)")


@pytest.fixture(params=IMPLEMENTATIONS)
def call_path(request, monkeypatch):
    """Clients made in the test take this call path (the compiled one skips where not built)."""
    module = _import(request.param)
    monkeypatch.setattr(client_module, "CallPath", module.CallPath)
    return module.CallPath


def _outcome(fn):
    try:
        return fn()
    except RpcError as exc:
        return type(exc).__name__


def _calls(address) -> list:
    """What a user sees of a mix of calls: results, or the kind of error."""
    big = bytes(range(256)) * (3 * 4096)           # 3 MiB: sent in parts, received in place
    with Client(address) as rpc:
        calc = CalcClient(rpc)
        out = [bytes(rpc.call(CALC_PROG, 1, 0)), calc.ADD(2, 3), calc.ADD(-7, 3)]
        for size in (0, 1, 5, 4096, 70_000, 300_000):
            out.append(calc.ECHO(bytes([size % 251]) * size) == bytes([size % 251]) * size)
        out.append(calc.ECHO(big) == big)
        out.append(_outcome(lambda: rpc.call(CALC_PROG, 1, 7)))          # FAIL: SYSTEM_ERR
        out.append(_outcome(lambda: rpc.call(CALC_PROG, 1, 8)))          # UNIMPL: PROC_UNAVAIL
        out.append(_outcome(lambda: rpc.call(CALC_PROG, 9, 1)))          # no such version
        out.append(_outcome(lambda: rpc.call(CALC_PROG, 1, 2, [b"\0\0\0\x09"])))  # short opaque
        out.append(calc.ADD(40, 2))                                        # still usable
    return out


def test_both_call_paths_give_the_same_results_and_errors(calc_server):
    results = {}
    for name in IMPLEMENTATIONS:
        module = _import(name)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(client_module, "CallPath", module.CallPath)
            results[name] = _calls(calc_server.address)
    compiled, pure = results.values()
    assert compiled == pure
    assert compiled == [b"", 5, -4, True, True, True, True, True, True, True,
                        "SystemErr", "ProcUnavail", "ProgMismatch",
                        "GarbageArgs", 42]


def test_a_call_of_many_pieces_is_still_sent_whole(call_path, calc_server):
    pieces = [b"\0\0\x01\x90"] + [bytes([i]) * 4 for i in range(100)]    # opaque<400>, 101 pieces
    with Client(calc_server.address) as rpc:
        res = rpc.call(CALC_PROG, 1, 2, pieces)
        assert bytes(res[4:]) == b"".join(pieces[1:])


def test_replies_to_other_calls_read_first_are_handed_over(call_path, calc_server):
    with Client(calc_server.address) as rpc:
        pending = [(i, rpc.start(CALC_PROG, 1, 1, [i.to_bytes(4, "big"), b"\0\0\0\1"]))
                   for i in range(50)]
        calc = CalcClient(rpc)
        assert calc.ADD(100, 1) == 101      # reads the 50 earlier replies first and keeps them
        assert [int.from_bytes(p.result()[:4], "big") for _, p in pending] == \
            [i + 1 for i, _ in pending]


def test_a_reply_in_many_fragments_is_reassembled(call_path):
    with ServerThread(Server([CalcV1()], max_fragment=1000)) as st, Client(st.address) as rpc:
        data = bytes(range(256)) * 400
        assert CalcClient(rpc).ECHO(data) == data


def test_a_reply_over_the_clients_maximum_fails_the_connection(call_path, calc_server):
    with Client(calc_server.address, max_record_size=1000) as rpc:
        assert CalcClient(rpc).ECHO(b"x" * 500) == b"x" * 500
        with pytest.raises(RecordTooLarge, match="maximum of 1000 bytes"):
            CalcClient(rpc).ECHO(b"x" * 2000)
        with pytest.raises(RecordTooLarge):
            CalcClient(rpc).ADD(1, 1)


def test_a_timeout_leaves_the_client_usable(call_path, calc_server):
    with Client(calc_server.address, timeout=0.2) as rpc:
        rpc.set_polling(0)
        calc = CalcClient(rpc)
        with pytest.raises(RpcTimeout, match="within 0.2 s"):
            calc.SLEEP(1000)
        rpc.timeout = 10
        assert calc.ADD(3, 4) == 7          # the late SLEEP reply is dropped, not mistaken


class _Interrupted(Exception):
    pass


def test_a_signal_handler_interrupts_the_wait(call_path, calc_process):
    # The server runs in another process, so the signal sent to this thread interrupts its read.
    def handler(signum, frame):
        raise _Interrupted()

    old = signal.signal(signal.SIGUSR1, handler)
    main = threading.get_ident()
    timer = threading.Timer(0.2, signal.pthread_kill, (main, signal.SIGUSR1))
    try:
        with Client(calc_process.address, timeout=30) as rpc:
            rpc.set_polling(0)
            calc = CalcClient(rpc)
            timer.start()
            with pytest.raises(_Interrupted):
                calc.SLEEP(3000)
            assert calc.ADD(5, 6) == 11     # the SLEEP reply, when it comes, is dropped
    finally:
        timer.cancel()
        signal.signal(signal.SIGUSR1, old)


def test_a_server_that_goes_away_is_reported_by_both(call_path):
    st = ServerThread(Server([CalcV1()])).start()
    rpc = Client(st.address, timeout=10)
    calc = CalcClient(rpc)
    assert calc.ADD(1, 2) == 3
    st.stop()
    with pytest.raises(RpcConnectionError):
        calc.ADD(1, 2)
    rpc.close()


def test_a_client_dropped_without_close_is_freed_at_once(call_path, calc_server, hooks):
    # No reference cycle between the client and its call path: the last reference going closes
    # the socket, without waiting for the garbage collector (a program that drops a connection
    # it failed to set up must not keep a session open on the server).
    import gc
    import time
    import weakref
    gc.disable()
    try:
        rpc = Client(calc_server.address)
        assert CalcClient(rpc).ADD(1, 1) == 2
        gone = weakref.ref(rpc)
        del rpc
        assert gone() is None
    finally:
        gc.enable()
    deadline = time.monotonic() + 30
    while len(hooks.disconnected) < len(hooks.connected) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert hooks.disconnected == hooks.connected


def test_a_call_the_socket_cannot_take_at_once_is_sent_as_it_drains(call_path):
    # A listener that accepts but never reads: the part the socket took first is followed by the
    # client's wait for room (reading replies meanwhile), which gives up after the timeout and
    # fails the connection with the reason.
    import socket as _socket
    with _socket.create_server(("127.0.0.1", 0)) as lsock:
        rpc = Client(lsock.getsockname(), timeout=0.5)
        conn, _ = lsock.accept()
        try:
            with pytest.raises(RpcTimeout, match="stopped reading"):
                rpc.call(CALC_PROG, 1, 2, [b"\x01\0\0\0", bytes(16 << 20)])     # 16 MiB ECHO
            with pytest.raises(RpcTimeout):
                rpc.call(CALC_PROG, 1, 0)
        finally:
            conn.close()
            rpc.close()


def test_a_large_call_to_a_reading_server_arrives_whole(call_path, calc_server):
    data = bytes(range(256)) * (7 * 4096)           # 7 MiB: more than the socket takes at once
    with Client(calc_server.address) as rpc:
        assert CalcClient(rpc).ECHO(data) == data
