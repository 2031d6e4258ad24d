"""Server limits for connections the program has not admitted yet (authenticated): record size,
time to admission, connections at once; an admitted client keeps being served."""
from __future__ import annotations

import socket
import struct
import time

import pytest

from cricket.rpc import Client, Server, ServerThread, admit_connection
from rpc_calc import CALC_PROG, CalcClient, CalcV1

LIMIT = 1024


class AdmittingCalc(CalcV1):
    """CALC whose ADD stands for a successful login: it admits the connection."""

    def ADD(self, a, b):
        admit_connection()
        return super().ADD(a, b)


def _closed(sock: socket.socket) -> bool:
    """Whether the server closed the connection (EOF or reset) within the socket's timeout."""
    try:
        while True:
            if not sock.recv(4096):
                return True
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False


def _echo_call(size: int) -> bytes:
    body = struct.pack(">10I", 1, 0, 2, CALC_PROG, 1, 2, 0, 0, 0, 0) + struct.pack(">I", size) + b"e" * size
    return struct.pack(">I", 0x80000000 | len(body)) + body


@pytest.fixture
def limited(loop_factory, hooks):
    def start(**limits) -> ServerThread:
        server = Server([AdmittingCalc()], on_connect=hooks.on_connect,
                        on_disconnect=hooks.on_disconnect, **limits)
        return ServerThread(server, ("127.0.0.1", 0), loop_factory=loop_factory).start()
    started: list[ServerThread] = []
    yield lambda **limits: started.append(start(**limits)) or started[-1]
    for st in started:
        st.stop()


def test_a_large_record_before_admission_closes_the_connection(limited):
    st = limited(unadmitted_record_size=LIMIT)
    with socket.create_connection(st.address, timeout=10) as sock:
        sock.sendall(_echo_call(2 * LIMIT))
        assert _closed(sock)
    with Client(st.address, timeout=10) as rpc:
        calc = CalcClient(rpc)
        assert calc.ECHO(b"small") == b"small"            # under the limit: served
        assert calc.ADD(2, 3) == 5                        # admitted from here on
        assert calc.ECHO(b"x" * 100 * LIMIT) == b"x" * 100 * LIMIT


def test_a_connection_not_admitted_in_time_is_closed(limited):
    st = limited(admit_timeout=0.5)
    with Client(st.address, timeout=10) as rpc:
        calc = CalcClient(rpc)
        assert calc.ADD(1, 1) == 2
        with socket.create_connection(st.address, timeout=10) as idle:
            assert _closed(idle)
        time.sleep(0.7)
        assert calc.ECHO(b"admitted") == b"admitted"


def test_a_connection_over_the_limit_is_closed_and_never_reaches_the_program(limited, hooks):
    st = limited(max_connections=2)
    with Client(st.address, timeout=10) as rpc, socket.create_connection(st.address, timeout=10):
        calc = CalcClient(rpc)
        assert calc.ADD(1, 2) == 3
        with socket.create_connection(st.address, timeout=10) as extra:
            assert _closed(extra)
        assert len(hooks.connected) == 2
        assert calc.ECHO(b"served") == b"served"


def test_limits_are_checked_when_the_server_is_made():
    with pytest.raises(ValueError):
        Server([], max_record_size=100, unadmitted_record_size=200)
    with pytest.raises(ValueError):
        Server([], admit_timeout=0)
    with pytest.raises(ValueError):
        Server([], max_connections=0)
