"""``wait_readable``, the poll of every blocking call's wait for its reply: the Cython module
(which polls a plain socket without holding the GIL) and its pure-Python twin return as soon as
bytes or the end of the stream are there, leave the bytes for the read, and give up after the
polling window."""
from __future__ import annotations

import importlib
import socket
import threading

import pytest


@pytest.fixture(params=["cricket._cext.socket_poll", "cricket.rpc.socket_poll"])
def poll(request):
    try:
        return importlib.import_module(request.param)
    except ImportError:
        pytest.skip(f"{request.param} is not built (make build)")


@pytest.fixture
def pair():
    a, b = socket.socketpair()
    yield a, b
    a.close()
    b.close()


@pytest.mark.parametrize("yield_cpu", [True, False])
def test_waiting_bytes_end_the_poll_and_stay_for_the_read(poll, pair, yield_cpu):
    a, b = pair
    b.sendall(b"reply")
    assert poll.wait_readable(a, bytearray(1), 60.0, yield_cpu)    # at once: bytes are there
    assert a.recv(16) == b"reply"


def test_the_end_of_the_stream_ends_the_poll(poll, pair):
    a, b = pair
    b.close()
    assert poll.wait_readable(a, bytearray(1), 60.0, True)
    assert a.recv(16) == b""


@pytest.mark.parametrize("yield_cpu", [True, False])
def test_a_silent_socket_is_polled_for_the_window_only(poll, pair, yield_cpu):
    a, _ = pair
    assert not poll.wait_readable(a, bytearray(1), 0.002, yield_cpu)
    assert not poll.wait_readable(a, bytearray(1), 0.0, yield_cpu)
    a.setblocking(False)
    with pytest.raises(BlockingIOError):        # nothing was consumed or made up
        a.recv(1)


def test_a_closed_socket_is_not_polled(poll):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.close()
    assert poll.wait_readable(s, bytearray(1), 60.0, True)    # nothing to wait for: read now


def test_a_socket_like_object_is_polled_through_its_recv_into(poll):
    class Pending:
        """A TLS socket holding decrypted bytes: its MSG_PEEK recv_into answers 1."""
        peeks = 0

        def recv_into(self, buffer, nbytes=0, flags=0):
            assert flags & socket.MSG_PEEK
            self.peeks += 1
            return 1

    sock = Pending()
    assert poll.wait_readable(sock, bytearray(1), 60.0, True)
    assert sock.peeks == 1


def test_the_compiled_poll_lets_other_threads_run(pair):
    try:
        from cricket._cext.socket_poll import wait_readable
    except ImportError:
        pytest.skip("cricket._cext.socket_poll is not built (make build)")
    a, b = pair
    progress = []

    def other() -> None:        # a Python thread that needs the GIL, then answers the poller
        progress.append(1)
        b.sendall(b"x")

    thread = threading.Thread(target=other)
    thread.start()
    # Polls (without yielding) until the other thread's byte comes: it only can while the
    # poller does not hold the GIL (else the window passes first and the answer is False).
    assert wait_readable(a, bytearray(1), 10.0, False)
    thread.join()
    assert progress == [1] and a.recv(1) == b"x"
