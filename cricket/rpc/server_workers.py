"""One server in several processes: ``workers`` event loops share the listeners.

One event loop runs on one core; with many clients the server's own work per call becomes the
limit. :func:`serve_in_workers` binds the listeners in the parent, forks ``workers`` processes
that each run a fresh event loop and :class:`~cricket.rpc.server.Server`, and then only accepts:
each new connection goes to the next worker in turn (its descriptor passed over a Unix socket
pair, SCM_RIGHTS). A connection stays in that worker with everything its calls create (a session
lives in one process).

Why not ``SO_REUSEPORT`` (a listening socket per worker, the kernel picks one by a hash of the
client's address and port): with 8 clients on 2 workers the hash puts them 4/4 only about one
time in four, and the clients of the fuller worker then get a smaller share of the calls (the
``rpc`` bench measured the fastest client at 2.9× the slowest, against 1.4× for libtirpc's
server). Handing out in turn keeps the counts equal, and it works for Unix sockets too, where
Linux has no ``SO_REUSEPORT``.

The parent runs no event loop: it forwards SIGINT/SIGTERM to the workers and, when any worker
ends, stops the others (a server with a dead worker would fail a share of its connections),
then removes its Unix socket paths.
"""
from __future__ import annotations

import contextlib
import logging
import os
import selectors
import signal
import socket
import stat
from collections.abc import Callable
from typing import Any

from .transport import Address, is_unix, parse_address

log = logging.getLogger(__name__)

# A worker's main: (its end of the hand-over pair, ready) -> exit status. It runs its own event
# loop, takes connections with :func:`receive_connections`, and calls ready() once it serves.
WorkerMain = Callable[[socket.socket, Callable[[], None]], int]


def bind_listeners(addresses: list[Address]) -> tuple[list[socket.socket], list[Address]]:
    """Listening sockets for ``addresses`` and their bound addresses (TCP port 0 picks a port)."""
    socks: list[socket.socket] = []
    bound: list[Address] = []
    try:
        for address in addresses:
            addr = parse_address(address)
            if is_unix(addr):
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                socks.append(sock)
                with contextlib.suppress(FileNotFoundError):
                    if stat.S_ISSOCK(os.stat(addr).st_mode):
                        os.unlink(addr)     # a stale socket of an earlier run, as asyncio does
                sock.bind(addr)
                bound.append(addr)
            else:
                host, port = addr
                sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
                socks.append(sock)
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                sock.bind((host, port))
                bound.append((host, sock.getsockname()[1]))
            sock.listen(1024)
            sock.setblocking(False)
    except BaseException:
        for sock in socks:
            sock.close()
        raise
    return socks, bound


def receive_connections(pair: socket.socket, adopt: Callable[[socket.socket], Any]) -> None:
    """In a worker: call ``adopt(connected socket)`` for each connection the parent hands over
    (on the running event loop, when ``pair`` is readable)."""
    import asyncio
    loop = asyncio.get_running_loop()
    pair.setblocking(False)

    def readable() -> None:
        while True:
            try:
                _, fds, _, _ = socket.recv_fds(pair, 1, 16)
            except BlockingIOError:
                return
            except OSError:
                loop.remove_reader(pair.fileno())
                return
            if not fds:                     # the parent is gone
                loop.remove_reader(pair.fileno())
                return
            for fd in fds:
                adopt(socket.socket(fileno=fd))

    loop.add_reader(pair.fileno(), readable)


def serve_in_workers(listeners: list[socket.socket], workers: int, worker_main: WorkerMain,
                     unix_paths: list[str] = (), on_ready: Callable[[], None] = lambda: None,
                     numbered: bool = False) -> int:
    """Fork ``workers`` processes running ``worker_main`` (``numbered``: with the worker's number,
    0 to ``workers - 1``, as a third argument); ``on_ready()`` runs here once every worker serves
    (if it raises, the workers are stopped); then hand each accepted connection to the next worker
    until a signal or a worker's end. Returns the first non-zero status of a worker, or 0."""
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    pids: list[int] = []
    pairs: list[socket.socket] = []
    ready_r, ready_w = os.pipe()
    for index in range(workers):
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
        pid = os.fork()
        if pid == 0:
            status = 1
            try:
                os.close(ready_r)
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                for sock in (*listeners, *pairs, mine):
                    sock.close()
                ready = lambda: (os.write(ready_w, b"r"), os.close(ready_w))   # noqa: E731
                status = worker_main(theirs, ready, index) if numbered else worker_main(theirs, ready)
            except BaseException:   # noqa: BLE001 - a worker must never return into the parent's code
                log.exception("server worker %d failed", os.getpid())
            finally:
                os._exit(status)
        theirs.close()
        mine.setblocking(False)     # a worker that does not take its connections is skipped
        pids.append(pid)
        pairs.append(mine)
    os.close(ready_w)
    with os.fdopen(ready_r, "rb") as ready:
        # one byte from each worker; fewer when one ended first (its end closes its copy of the pipe)
        all_ready = len(ready.read(workers)) == workers
    try:
        if all_ready:
            log.info("serving from %d worker processes: %s", workers, " ".join(map(str, pids)))
            try:
                on_ready()
            except BaseException:
                _stop(set(pids))
                raise
        return _hand_out(listeners, pairs, pids, all_ready)
    finally:
        for sock in (*listeners, *pairs):
            sock.close()
        for path in unix_paths:
            with contextlib.suppress(OSError):
                os.unlink(path)


def _hand_out(listeners: list[socket.socket], pairs: list[socket.socket], pids: list[int],
              serving: bool) -> int:
    """Accept and pass connections round-robin until SIGINT/SIGTERM or a worker's end."""
    wake_r, wake_w = socket.socketpair()
    wake_r.setblocking(False)
    wake_w.setblocking(False)
    old_wakeup = signal.set_wakeup_fd(wake_w.fileno())
    stopping = not serving
    status = 0 if serving else 1

    def on_signal(signum: int, _frame: Any) -> None:
        nonlocal stopping
        stopping = True

    old = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    old[signal.SIGCHLD] = signal.signal(signal.SIGCHLD, lambda *_: None)   # wakes the select (wakeup fd)
    sel = selectors.DefaultSelector()
    for sock in listeners:
        sel.register(sock, selectors.EVENT_READ)
    sel.register(wake_r, selectors.EVENT_READ)
    alive = set(pids)
    turn = 0
    try:
        while alive:
            for pid in list(alive):     # a worker that ended stops the server
                done, raw = os.waitpid(pid, os.WNOHANG)
                if done:
                    alive.discard(pid)
                    if not stopping:
                        code = os.waitstatus_to_exitcode(raw)
                        log.error("server worker %d ended (status %d); stopping the other workers", pid, code)
                        status = code if code > 0 else 1
                        stopping = True
            if stopping:
                break
            for key, _ in sel.select():
                if key.fileobj is wake_r:
                    with contextlib.suppress(BlockingIOError):
                        while wake_r.recv(512):
                            pass
                    continue
                try:
                    conn, _ = key.fileobj.accept()
                except (BlockingIOError, ConnectionAbortedError):
                    continue
                except OSError as exc:      # out of descriptors, say: the client may try again
                    log.warning("accept failed: %s", exc)
                    continue
                with conn:
                    for _ in range(len(pairs)):
                        pair = pairs[turn % len(pairs)]
                        turn += 1
                        try:
                            socket.send_fds(pair, [b"c"], [conn.fileno()])
                            break
                        except OSError as exc:
                            log.warning("could not hand a connection to a worker: %s", exc)
    finally:
        sel.close()
        for sig, handler in old.items():
            signal.signal(sig, handler)
        signal.set_wakeup_fd(old_wakeup)
        wake_r.close()
        wake_w.close()
        _stop(alive)
    return status


def _stop(alive: set[int]) -> None:
    for pid in alive:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    for pid in alive:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)
