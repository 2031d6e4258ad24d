"""The blocking client against a real server on loopback: calls, errors, pipelining, batching,
threads, timeouts and a server that goes away."""
from __future__ import annotations

import threading
import time

import pytest

from cricket.rpc import (AuthSys, Client, GarbageArgs, ProcUnavail, ProgMismatch, ProgUnavail,
                         RpcConnectionError, RpcTimeout, Server, ServerThread, SystemErr)
from rpc_calc import CALC_PROG, CalcClient, CalcV1


def test_add_returns_the_sum_over_tcp(calc_server):
    with Client(calc_server.address) as rpc:
        assert CalcClient(rpc).ADD(40, 2) == 42
        assert CalcClient(rpc, version=2).ADD(40, 2) == 1042


def test_unix_socket_transport_carries_calls(unix_server):
    with Client(unix_server.address) as rpc:
        assert CalcClient(rpc).ADD(-5, 3) == -2


def test_null_answers_for_every_served_version(calc_server):
    with Client(calc_server.address) as rpc:
        assert bytes(rpc.call(CALC_PROG, 1, 0)) == b""
        assert bytes(rpc.call(CALC_PROG, 2, 0)) == b""


def test_unknown_version_reports_served_range(calc_server):
    with Client(calc_server.address) as rpc:
        with pytest.raises(ProgMismatch) as err:
            rpc.null(CALC_PROG, 7)
        assert (err.value.low, err.value.high) == (1, 2)


def test_unknown_program_and_procedure(calc_server):
    with Client(calc_server.address) as rpc:
        with pytest.raises(ProgUnavail):
            rpc.null(CALC_PROG + 1, 1)
        with pytest.raises(ProcUnavail):
            rpc.call(CALC_PROG, 1, 99)
        with pytest.raises(ProcUnavail):          # the handler raises NotImplementedError
            rpc.call(CALC_PROG, 1, 8)
        assert CalcClient(rpc).ADD(1, 1) == 2     # the connection is still fine


def test_short_arguments_get_garbage_args(calc_server):
    with Client(calc_server.address) as rpc:
        with pytest.raises(GarbageArgs):
            rpc.call(CALC_PROG, 1, 1, [b"\0\0\0\1"])   # ADD needs two ints


def test_failing_handler_gets_system_err(calc_server):
    with Client(calc_server.address) as rpc:
        with pytest.raises(SystemErr):
            rpc.call(CALC_PROG, 1, 7)
        assert CalcClient(rpc).ADD(2, 2) == 4


def test_large_opaque_round_trips(calc_server):
    data = bytes(range(256)) * 16384         # 4 MiB
    with Client(calc_server.address) as rpc:
        assert CalcClient(rpc).ECHO(data) == data


def test_reply_in_many_fragments_is_reassembled():
    server = Server([CalcV1()], max_fragment=1000)
    with ServerThread(server) as st, Client(st.address) as rpc:
        data = b"\x5a" * 100_000
        assert CalcClient(rpc).ECHO(data) == data


def test_pipelined_calls_are_matched_by_xid(calc_server):
    with Client(calc_server.address) as rpc:
        pending = [(i, rpc.start(CALC_PROG, 1, 1, [i.to_bytes(4, "big"), b"\0\0\0\1"]))
                   for i in range(2000)]
        for i, p in reversed(pending):                # collected in the opposite order
            assert int.from_bytes(p.result(), "big") == i + 1


def test_batched_calls_send_no_reply_and_are_flushed_by_next_call(calc_server):
    with Client(calc_server.address) as rpc:
        calc = CalcClient(rpc)
        for i in range(5):
            assert calc.LOG(f"line {i}") is None
        assert calc.COUNT() == 5


def test_one_client_shared_by_threads(calc_server):
    errors = []
    with Client(calc_server.address) as rpc:
        calc = CalcClient(rpc)

        def work(k):
            try:
                for i in range(300):
                    assert calc.ADD(k * 1000, i) == k * 1000 + i
            except Exception as exc:       # reported below
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
    assert errors == []


def test_auth_sys_credential_reaches_the_handler(calc_server):
    auth = AuthSys(uid=1234, gid=99, gids=(5, 6), machinename="testhost")
    with Client(calc_server.address, auth=auth) as rpc:
        flavor, uid, gid, name, _ = CalcClient(rpc).WHOAMI()
    assert (flavor, uid, gid, name) == (1, 1234, 99, "testhost")


def test_handlers_see_their_own_connection(calc_server, hooks):
    with Client(calc_server.address) as a, Client(calc_server.address) as b:
        ida, idb = CalcClient(a).WHOAMI()[4], CalcClient(b).WHOAMI()[4]
        assert ida != idb
        assert {ida, idb} <= set(hooks.connected)
    deadline = time.monotonic() + 5
    while not {ida, idb} <= set(hooks.disconnected) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert {ida, idb} <= set(hooks.disconnected)


def test_timeout_raises_and_client_stays_usable(calc_server):
    with Client(calc_server.address, timeout=0.2) as rpc:
        calc = CalcClient(rpc)
        t0 = time.monotonic()
        with pytest.raises(RpcTimeout, match="within 0.2 s"):
            calc.SLEEP(1000)
        assert time.monotonic() - t0 < 0.9
        rpc.timeout = 5
        assert calc.ADD(3, 4) == 7           # the late SLEEP reply is dropped, not mistaken


def test_server_going_away_gives_clear_error_not_hang():
    st = ServerThread(Server([CalcV1()])).start()
    rpc = Client(st.address, timeout=10)
    calc = CalcClient(rpc)
    assert calc.ADD(1, 2) == 3
    pending = rpc.start(CALC_PROG, 1, 6, [b"\0\0\x03\xe8"])   # SLEEP 1000 ms
    t0 = time.monotonic()
    st.stop()
    with pytest.raises(RpcConnectionError, match="closed the connection"):
        pending.result()
    assert time.monotonic() - t0 < 5
    with pytest.raises(RpcConnectionError):
        calc.ADD(1, 2)
    rpc.close()


def test_connect_refused_is_a_connection_error():
    st = ServerThread(Server([CalcV1()])).start()
    addr = st.address
    st.stop()
    with pytest.raises(RpcConnectionError, match="could not connect"):
        Client(addr)


def test_unix_socket_file_is_removed_when_the_server_closes(tmp_path):
    path = tmp_path / "gone.sock"
    with ServerThread(Server([CalcV1()]), str(path)) as st, Client(st.address) as rpc:
        assert CalcClient(rpc).ADD(1, 1) == 2
        assert path.exists()
    assert not path.exists()


def test_pipelined_calls_from_many_threads_reach_the_right_thread(calc_server):
    errors = []
    with Client(calc_server.address) as rpc:
        def work(k):
            try:
                pending = [(i, rpc.start(CALC_PROG, 2, 1, [k.to_bytes(4, "big"), i.to_bytes(4, "big")]))
                           for i in range(300)]
                for i, p in reversed(pending):
                    assert int.from_bytes(p.result(), "big") == k + i + 1000
            except Exception as exc:       # reported below
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
    assert errors == []


def test_server_thread_runs_on_uvloop_when_installed(calc_server):
    uvloop = pytest.importorskip("uvloop")
    assert isinstance(calc_server.loop, uvloop.Loop)


def test_send_to_a_server_that_stopped_reading_times_out():
    import socket as _socket
    # A listener that accepts but never reads: the send buffers fill and the call must fail.
    with _socket.create_server(("127.0.0.1", 0)) as lsock:
        rpc = Client(lsock.getsockname(), timeout=0.5)
        conn, _ = lsock.accept()
        try:
            t0 = time.monotonic()
            with pytest.raises(RpcTimeout, match="stopped reading"):
                for _ in range(1000):
                    rpc.start(CALC_PROG, 1, 2, [b"\0\x10\0\0", b"\0" * 0x100000])   # 1 MiB ECHOs
            assert time.monotonic() - t0 < 10
            with pytest.raises(RpcTimeout):
                rpc.call(CALC_PROG, 1, 0)        # the connection stays failed, with the reason
        finally:
            conn.close()
            rpc.close()


def test_server_also_runs_on_the_plain_asyncio_loop():
    import asyncio
    server = Server([CalcV1()])
    with ServerThread(server, loop_factory=asyncio.new_event_loop) as st, Client(st.address) as rpc:
        assert type(st.loop).__module__.startswith("asyncio")
        calc = CalcClient(rpc)
        assert calc.ADD(20, 22) == 42
        assert calc.SLEEP(10) >= 0                      # a coroutine handler
        pending = [rpc.start(CALC_PROG, 1, 0) for _ in range(500)]
        assert all(bytes(p.result()) == b"" for p in pending)


def test_reply_over_the_client_maximum_is_refused(calc_server):
    from cricket.rpc import RecordTooLarge
    with Client(calc_server.address, max_record_size=1000) as rpc:
        assert CalcClient(rpc).ECHO(b"x" * 500) == b"x" * 500
        with pytest.raises(RecordTooLarge, match="maximum of 1000 bytes"):
            CalcClient(rpc).ECHO(b"x" * 2000)
