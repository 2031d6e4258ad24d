"""``cricket server --workers N``: one server served from N processes (docs/server-workers.md).

The parent binds the listener, makes the shared ledger of the server-wide bounds and a private
folder for the workers' figure sockets, forks the workers (:mod:`cricket.rpc.server_workers`),
and hands each connection to the next worker in turn; a session lives in one worker. Each worker
loads the backends itself (a GPU context does not survive a fork). The parent serves the metrics
of all workers; a worker's status reply lists the sessions of all. When a worker ends, the
server stops, as ``python -m cricket.rpc serve --workers`` does.
"""
from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import secrets
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from ..backends.registry import BackendRegistry, parse_backend_option
from ..rpc.transport import new_event_loop
from . import ipc, ledger
from .app import (ServerConfig, ServerStartError, build, close_on_signal, listen_error, load_backends,
                  serve_metrics, take_unix_path)
from .metrics import figures, merge
from .session import Session
from .tls_options import exposure_problem
from .worker_peers import FIGURES, SESSIONS, PeerListener, Peers, gather, sessions_of

log = logging.getLogger(__name__)

MAX_WORKERS = 64
LOAD_REFUSED = ("LOADBACKEND is refused by a server with several workers (it would load into one "
                "worker only): name the backends with --backend at start, or run with --workers 1")


def usage_problem(config: ServerConfig, workers: int) -> str | None:
    """Why ``config`` cannot run in ``workers`` processes (one line), or None."""
    if not 1 <= workers <= MAX_WORKERS:
        return f"--workers {workers}: give 1 to {MAX_WORKERS}"
    if workers == 1:
        return None
    if config.register:
        return "--register works with one worker only; leave out --workers or --register"
    for option in config.backends:
        try:
            name, spec = parse_backend_option(option)
        except ValueError:
            continue            # the worker reports it as a backend that does not load
        if name == "cuda" and "shared" in (spec or "").split(","):
            return (f"--backend {option}: a shared context cannot span worker processes; "
                    "leave out ',shared' or run with --workers 1")
    return None


def run_workers(config: ServerConfig, workers: int) -> int:
    """Serve ``config`` from ``workers`` processes until SIGINT/SIGTERM or a worker's end."""
    from ..rpc.server_workers import bind_listeners, serve_in_workers
    if config.unix_path:
        take_unix_path(Path(config.unix_path))
        address: Any = config.unix_path
        shown = config.unix_path
    else:
        problem = exposure_problem(config.host, config.port, config.token, config.tls, config.insecure)
        if problem:
            raise ServerStartError(problem)
        address, shown = (config.host, config.port), f"{config.host}:{config.port}"
    try:
        listeners, bound = bind_listeners([address])
    except OSError as exc:
        raise listen_error(shown, exc) from None
    if not config.unix_path:
        shown = f"{bound[0][0]}:{bound[0][1]}"
    ledger.use_shared()
    folder = tempfile.mkdtemp(prefix="cricket-workers-")      # mode 0700: the server's user only
    paths = [os.path.join(folder, f"worker-{i}.sock") for i in range(workers)]
    tag = secrets.token_bytes(6)
    metrics: list[Any] = []

    def on_ready() -> None:
        if config.metrics:
            metrics.append(serve_metrics(lambda: merge(gather(paths, FIGURES)), config.metrics))
        log.info("cricket server listening on %s with %d workers", shown, workers)
        print(f"cricket server listening on {shown}", flush=True)
        if config.ready_file:
            tmp = Path(config.ready_file + ".tmp")
            tmp.write_text(shown + "\n")
            os.replace(tmp, config.ready_file)

    def worker_main(pair, ready, index: int) -> int:
        Session.number_from(index + 1, workers)      # session ids unique in the server
        ipc.mark_handles(tag, index)
        sys.setswitchinterval(float(os.environ.get("CRICKET_SWITCH_INTERVAL", "0.001")))
        loop = new_event_loop()
        try:
            return loop.run_until_complete(_serve_worker(config, workers, index, paths, pair, ready))
        finally:
            loop.close()

    try:
        return serve_in_workers(listeners, workers, worker_main,
                                [config.unix_path] if config.unix_path else [], on_ready, numbered=True)
    finally:
        for server in metrics:
            server.close()
        shutil.rmtree(folder, ignore_errors=True)


async def _serve_worker(config: ServerConfig, workers: int, index: int, paths: list[str],
                        pair, ready) -> int:
    from ..rpc.server_workers import receive_connections
    registry = BackendRegistry()
    loop = asyncio.get_running_loop()
    try:
        await loop.run_in_executor(None, load_backends, registry, config.backends, bool(config.backends))
    except ServerStartError as exc:
        if index == 0:          # every worker meets the same error: say it once
            print(f"cricket server: {exc}", file=sys.stderr, flush=True)
        return 1
    mine = dataclasses.replace(config, image_cache_bytes=max(config.image_cache_bytes // workers, 1))
    service, program, server = build(mine, registry, ledger.SERVER)
    _share_sessions(server, config.max_sessions)
    service.load_refusal = LOAD_REFUSED
    service.peers = Peers([p for i, p in enumerate(paths) if i != index])
    listener = PeerListener(paths[index], {SESSIONS: lambda: sessions_of(service),
                                           FIGURES: lambda: figures(service)})
    receive_connections(pair, lambda sock: asyncio.ensure_future(server.adopt(sock)))
    ready()
    try:
        await close_on_signal(service, program, server, registry)
    finally:
        listener.close()
    return 0


def _share_sessions(server, max_sessions: int) -> None:
    """Count ``server``'s connections in the shared ledger against ``max_sessions`` in all."""
    counts = ledger.SERVER

    def take_seat() -> bool:
        try:
            return counts.take(((ledger.SESSIONS, 1, max_sessions),)) is None
        except ledger.LedgerStuck:          # logged by the ledger; the connection is refused
            return False

    server.take_seat = take_seat
    disconnected = server.on_disconnect

    def on_disconnect(connection_id: int) -> None:
        try:
            counts.give(ledger.SESSIONS, 1)
        except ledger.LedgerStuck:          # the session is freed all the same
            pass
        disconnected(connection_id)

    server.on_disconnect = on_disconnect
