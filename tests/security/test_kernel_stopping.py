"""Kernels that never end: gone when their client leaves, by --kernel-timeout, and at shutdown,
without starving other sessions meanwhile (emu backend; a real server process)."""
import os
import re
import signal
import threading
import time

import numpy as np
import pytest

from cricket.client.api import CudaError, connect

from hostile_peers import wait_for_log


def closed(session: int) -> re.Pattern[str]:
    """The server's log line of a session's close (it names the peer: `session 3 (pid ...) closed`)."""
    return re.compile(rf"session {session} (\(.*\) )?closed")
from attacks import launch_forever
from kernel_peers import LAUNCH_TIMEOUT, PTX, busy_workers, descendants, gone

EMU = ("--backend", "emu=memory=256M")


def filled(conn, value: int, n: int = 256) -> bool:
    """A short kernel of this session runs and its result comes back."""
    out = conn.alloc(4 * n)
    conn.load_module(PTX).get_function("fill").launch(1, n, [out, value], sync=True)
    ok = bool((out.to_host(np.uint32) == value).all())
    out.free()
    return ok


def test_spinning_kernel_is_cancelled_when_its_client_disconnects(start_server):
    server = start_server(*EMU)
    spinner = connect(server.address)
    launch_forever(spinner)
    (worker,) = busy_workers(server)
    spinner.close()
    assert gone(worker), "the kernel kept running after its client left"
    with connect(server.address) as other:
        assert filled(other, 7)
    assert server.alive()


def test_a_session_leaving_leaves_other_sessions_kernels_running(start_server):
    server = start_server(*EMU)
    first = connect(server.address)
    assert filled(first, 1)                  # the first session's kernel starts the worker machinery
    before = set(descendants(server.process.pid))
    with connect(server.address) as second:
        launch_forever(second)
        (worker,) = set(busy_workers(server)) - before
        first.close()
        assert wait_for_log(server, closed(1))
        assert not gone(worker, timeout=1), "another session's leaving stopped this session's kernel"
    assert gone(worker)


def test_launch_of_2_31_minus_1_blocks_is_cancellable(start_server):
    server = start_server(*EMU)
    client = connect(server.address)
    launch_forever(client, grid=2**31 - 1, kernel="nothing")
    workers = busy_workers(server)               # one, or several sharing the CTAs
    client.close()
    assert all(gone(worker) for worker in workers)
    with connect(server.address) as other:
        assert filled(other, 3)


def test_kernel_timeout_ends_that_sessions_kernel_only(start_server):
    server = start_server(*EMU, "--kernel-timeout", "1")
    with connect(server.address) as spinner, connect(server.address) as bystander:
        kept = bystander.to_device(b"kept" * 1000)
        out = spinner.alloc(4 * 32)
        forever = spinner.load_module(PTX).get_function("forever")
        errors = []

        def spin() -> None:
            try:
                forever.launch(1, 32, [out], sync=True)
            except CudaError as exc:
                errors.append(exc.code)

        thread = threading.Thread(target=spin)
        thread.start()
        served = 0
        while thread.is_alive():                  # the bystander works while the kernel spins
            assert filled(bystander, served)
            served += 1
        thread.join()
        assert errors == [LAUNCH_TIMEOUT]
        assert served > 0
        assert bytes(kept.to_host()) == b"kept" * 1000
        assert filled(bystander, 99)
    assert server.alive()


def test_four_spinning_sessions_leave_a_fifth_served(start_server):
    server = start_server(*EMU)
    spinners = [connect(server.address) for _ in range(4)]
    for conn in spinners:
        launch_forever(conn)
    busy_workers(server, count=4)
    with connect(server.address) as fifth:
        data = bytes(range(256)) * 16
        for _ in range(50):
            fifth.ping()
            buf = fifth.to_device(data)
            assert bytes(buf.to_host()) == data
            buf.free()
        assert filled(fifth, 5)
    for conn in spinners:
        conn.close()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_with_a_spinning_kernel_ends_the_server(start_server, sig):
    server = start_server(*EMU)
    spinner = connect(server.address)
    launch_forever(spinner)
    busy_workers(server)
    below = descendants(server.process.pid)
    server.process.send_signal(sig)
    assert server.process.wait(timeout=60) == 0
    assert all(gone(pid) for pid in below), "a kernel worker outlived the server"
    spinner.close()


def test_second_signal_exits_at_once(start_server):
    server = start_server(*EMU)
    server.process.send_signal(signal.SIGSTOP)      # both signals arrive before it runs again:
    _wait_stopped(server.process.pid)               # a SIGCONT would drop a SIGSTOP not yet taken
    server.process.send_signal(signal.SIGTERM)
    server.process.send_signal(signal.SIGINT)
    server.process.send_signal(signal.SIGCONT)
    assert server.process.wait(timeout=60) == 1


def _wait_stopped(pid: int, seconds: float = 30.0) -> None:
    """Wait until the process is in the stopped state ('T' in /proc/PID/stat)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with open(f"/proc/{pid}/stat") as f:
            if f.read().rsplit(")", 1)[1].split()[0] == "T":
                return
        time.sleep(0.001)
    raise AssertionError(f"process {pid} did not stop within {seconds} s")


def test_a_killed_server_leaves_no_kernel_workers(start_server):
    server = start_server(*EMU)
    spinner = connect(server.address)
    launch_forever(spinner)
    busy_workers(server)
    below = descendants(server.process.pid)
    server.process.kill()
    server.process.wait()
    assert all(gone(pid) for pid in below), "a kernel worker outlived its killed server"
    spinner.close()


def test_sessions_that_ran_kernels_leave_no_fds_threads_or_workers_behind(start_server):
    server = start_server(*EMU)
    pid = server.process.pid

    def held() -> tuple[int, int, int]:
        """The server's open fds, its threads and its kernel workers once its workers settled."""
        deadline = time.monotonic() + 30                  # killed workers take a moment to go
        while descendants(pid, below=1) and time.monotonic() < deadline:
            time.sleep(0.05)
        return (len(os.listdir(f"/proc/{pid}/fd")), len(os.listdir(f"/proc/{pid}/task")),
                len(descendants(pid, below=1)))

    with connect(server.address) as first:           # starts the worker machinery once
        assert filled(first, 1)
    assert wait_for_log(server, closed(1))
    before = held()
    clients = [connect(server.address) for _ in range(3)]
    for k, conn in enumerate(clients):
        assert filled(conn, k)
    launch_forever(clients[0])
    busy_workers(server)
    for conn in clients:
        conn.close()
    for k in range(2, 5):
        assert wait_for_log(server, closed(k))
    assert held() == before, "(fds, threads, kernel workers) before and after three sessions"
