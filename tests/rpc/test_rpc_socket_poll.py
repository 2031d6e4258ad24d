"""``wait_readable``, the poll of every blocking call's wait for its reply: the Cython module
(which polls a plain socket without holding the GIL) and its pure-Python twin return as soon as
bytes or the end of the stream are there, leave the bytes for the read, and give up after the
polling window; a yield between polls that comes back late (another process took the CPU) pauses
the polling of the process's waits for a while."""
from __future__ import annotations

import importlib
import os
import socket
import subprocess
import sys
import threading
import time

import pytest


from cricket.rpc.contention import CONTENDED_PAUSE, CONTENDED_YIELD


@pytest.fixture(params=["cricket._cext.socket_poll", "cricket.rpc.socket_poll"])
def poll(request):
    """The module, its polling not paused (a busy machine may have paused it before the test)."""
    try:
        module = importlib.import_module(request.param)
    except ImportError:
        pytest.skip(f"{request.param} is not built (make build)")
    module.pause_polling(0.0)
    yield module
    module.pause_polling(0.0)


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


def test_a_late_yield_pauses_polling_and_a_prompt_one_does_not(poll):
    t = time.monotonic()
    assert not poll.note_yield(t, t + CONTENDED_YIELD / 10)     # the peer ran: poll on
    assert poll.polling_paused_until() == 0.0
    assert poll.note_yield(t, t + 5 * CONTENDED_YIELD)          # someone's time slice
    assert poll.polling_paused_until() == pytest.approx(t + 5 * CONTENDED_YIELD + CONTENDED_PAUSE)
    assert not poll.note_yield(t, t)                            # a prompt one does not end the pause
    assert poll.polling_paused_until() > t


def test_while_paused_a_yielding_wait_leaves_the_bytes_to_the_read(poll, pair):
    a, b = pair
    b.sendall(b"reply")
    poll.pause_polling(time.monotonic() + 60)
    assert not poll.wait_readable(a, bytearray(1), 60.0, True)     # not polled: read now
    assert poll.wait_readable(a, bytearray(1), 60.0, False)        # pure spinning is not paused
    poll.pause_polling(time.monotonic() - 1)                       # the pause is over
    assert poll.wait_readable(a, bytearray(1), 60.0, True)
    assert a.recv(16) == b"reply"


def test_a_yield_that_comes_back_late_ends_the_poll_and_the_next_does_not_poll(pair, monkeypatch):
    """The twin, whose yields can be slowed: each one takes longer than CONTENDED_YIELD."""
    from cricket.rpc import socket_poll
    socket_poll.pause_polling(0.0)
    a, _ = pair
    yields = []

    def someone_elses_slice() -> None:
        yields.append(1)
        time.sleep(2 * CONTENDED_YIELD)
    monkeypatch.setattr(os, "sched_yield", someone_elses_slice)
    try:
        assert not socket_poll.wait_readable(a, bytearray(1), 1.0, True)
        assert yields == [1]                            # one yield, not a second of them
        assert not socket_poll.wait_readable(a, bytearray(1), 1.0, True)
        assert yields == [1]                            # paused: no poll, no yield
    finally:
        socket_poll.pause_polling(0.0)


def test_a_busy_process_on_the_same_cpu_pauses_the_polling(poll, pair):
    """For real: a process that never sleeps shares the poller's one CPU, so a yield hands it the
    CPU until its time slice ends."""
    a, _ = pair
    cpu = min(os.sched_getaffinity(0))
    mine = os.sched_getaffinity(0)
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        os.sched_setaffinity(busy.pid, {cpu})
        os.sched_setaffinity(0, {cpu})          # this thread only
        for _ in range(200):
            poll.wait_readable(a, bytearray(1), 0.005, True)
            if poll.polling_paused_until():
                break
    finally:
        os.sched_setaffinity(0, mine)
        busy.kill()
        busy.wait()
    assert poll.polling_paused_until() > 0.0
