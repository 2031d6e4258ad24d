"""Assemble and run a cricket server: backends, the service, the RPC listener, signal handling."""
from __future__ import annotations

import asyncio
import dataclasses
import errno
import logging
import os
import signal
import socket
import sys
from pathlib import Path
from typing import Any

from ..backends.registry import BackendLoadError, BackendRegistry, parse_backend_option
from ..rpc import Server
from ..rpc.errors import RpcError
from ..rpc.transport import new_event_loop
from .auth_guard import guard_hello
from .tls_options import exposure_problem, note_identity
from .limits import DEFAULT_HELLO_TIMEOUT, DEFAULT_MAX_SESSIONS, PRE_HELLO_MAX_RECORD, DEFAULT_MAX_IMAGE, MemoryBudget

log = logging.getLogger(__name__)

def max_record(max_image: int) -> int:
    """A record holds the largest argument the server takes (a copy's data, or one module image
    of at most ``max_image`` bytes) plus headers; a larger one closes its connection unread."""
    from ..protocol import gen as P
    return max(P.CRICKET_MAX_INLINE, max_image) + (1 << 16)


SHUTDOWN_SECONDS = 4.0      # from SIGTERM/SIGINT to exit, at most (plus the backends' close)


class ServerStartError(Exception):
    """The server cannot start as configured; the message says why and what to do (one line)."""


@dataclasses.dataclass
class ServerConfig:
    host: str = "127.0.0.1"
    port: int = 7391
    unix_path: str | None = None
    backends: list[str] = dataclasses.field(default_factory=list)
    token: str = ""
    admin_token: str = ""
    ready_file: str | None = None
    image_cache_bytes: int = 1 << 30
    max_image: int = DEFAULT_MAX_IMAGE      # bytes of one module image
    register: bool = False
    poll_us: float = 100.0
    max_sessions: int = DEFAULT_MAX_SESSIONS
    hello_timeout: float = DEFAULT_HELLO_TIMEOUT
    allow_backend_import: bool = False
    tls: Any = None                # a cricket.rpc.tls.ServerTls: RPC-over-TLS offered on TCP
    insecure: bool = False         # listen beyond loopback with no authentication at all
    session_memory: int | None = None       # device memory per session (None: no own bound)
    device_memory: int | None = None        # ... in all (None: half the host's, emulated only)
    metrics: tuple[str, int] | None = None       # serve Prometheus metrics there
    kernel_timeout: float | None = None     # seconds a kernel may run; None: no limit


def load_backends(registry: BackendRegistry, options: list[str], strict: bool = False) -> list[str]:
    """Load each ``NAME[=SPEC]``; with none, cuda when a GPU is usable else emu. Returns the errors
    (one line each); the server keeps running with whatever loaded, unless ``strict``: then a
    backend that was asked for and does not load is a :class:`ServerStartError`."""
    errors: list[str] = []
    if not options:
        from ..backends.cuda import CudaBackend
        reason = CudaBackend.unavailable_reason()
        if reason is None:
            options = ["cuda"]
        else:
            log.info("no --backend given and the cuda backend is unavailable (%s): using emu", reason)
            options = ["emu"]
    for option in options:
        try:
            name, spec = parse_backend_option(option)
            registry.load(name, spec)
        except (BackendLoadError, ValueError) as exc:
            if strict:
                raise ServerStartError(f"backend {option!r} does not load: {exc}; "
                                       "`cricket server --list-backends` shows what can be loaded here") from None
            log.error("backend %s not loaded: %s", option, exc)
            errors.append(str(exc))
    if not registry.loaded():
        log.error("no backend is loaded: clients cannot use this server until an admin loads one "
                  "(LOADBACKEND)")
    return errors


def build(config: ServerConfig, registry: BackendRegistry | None = None, ledger=None):
    """The service and the RPC server for ``config`` (not listening yet); ``ledger``: where the
    server-wide device memory is counted (:mod:`cricket.server.ledger`; a fresh one if None)."""
    from .images import ImageCache
    from ..protocol import PROCEDURES
    from .program import HTOD_SINK_FIXED, CricketProgram
    from .service import CricketService
    registry = registry or BackendRegistry()
    service = CricketService(registry, token=config.token, admin_token=config.admin_token,
                             image_cache=ImageCache(config.image_cache_bytes, config.max_image),
                             allow_backend_import=config.allow_backend_import,
                             memory=MemoryBudget(config.session_memory, config.device_memory, ledger=ledger),
                             kernel_timeout=config.kernel_timeout)
    program = CricketProgram(service)
    server = Server([], max_record_size=max_record(config.max_image), on_connect=program.on_connect,
                    on_disconnect=program.on_disconnect, poll=config.poll_us / 1e6,
                    unadmitted_record_size=PRE_HELLO_MAX_RECORD,
                    admit_timeout=config.hello_timeout, max_connections=config.max_sessions,
                    tls=config.tls, on_tls=lambda cid, subject: note_identity(program, cid, subject))
    guard_hello(program, server)
    server.add(program)
    # Host-to-device bytes go from the socket straight into device memory where the backend allows.
    server.add_payload_sink(program.PROGRAM, program.VERSION, PROCEDURES["CR_MEMCPY_HTOD"],
                            HTOD_SINK_FIXED, program.receive_htod)
    return service, program, server


async def serve(config: ServerConfig) -> int:
    registry = BackendRegistry()
    loop = asyncio.get_running_loop()
    metrics = None
    # Backends may take a while to initialise (a GPU driver): keep the loop free meanwhile.
    try:
        await loop.run_in_executor(None, load_backends, registry, config.backends, bool(config.backends))
        service, program, server = build(config, registry)
        if config.metrics:
            from .metrics import figures
            metrics = serve_metrics(lambda: figures(service), config.metrics)
        socket_id = None
        if config.unix_path:
            path = Path(config.unix_path)
            take_unix_path(path)
            address = await _listen(server, str(path), str(path))
            shown = str(path)
            socket_id = _inode(path)
        else:
            problem = exposure_problem(config.host, config.port, config.token, config.tls, config.insecure)
            if problem:
                raise ServerStartError(problem)
            shown = f"{config.host}:{config.port}"
            address = await _listen(server, (config.host, config.port), shown)
            shown = f"{address[0]}:{address[1]}"
            if config.register:
                try:
                    await server.register()
                except (OSError, RpcError) as exc:
                    await server.close()
                    raise ServerStartError(f"cannot register with rpcbind ({exc}); start rpcbind or "
                                           "leave out --register") from None
    except BaseException:
        if metrics is not None:
            metrics.close()
        registry.close()
        raise
    log.info("cricket server listening on %s with backends %s (default %s)", shown,
             ", ".join(registry.loaded()) or "none", registry.default)
    print(f"cricket server listening on {shown}", flush=True)
    if config.ready_file:
        tmp = Path(config.ready_file + ".tmp")
        tmp.write_text(shown + "\n")
        os.replace(tmp, config.ready_file)
    stuck = await close_on_signal(service, program, server, registry)
    if metrics is not None:
        metrics.close()
    log.info("cricket server stopped")
    if config.unix_path and _inode(Path(config.unix_path)) == socket_id:
        Path(config.unix_path).unlink(missing_ok=True)     # ours still: no other server took the path
    if stuck:
        # A busy session thread would hold the interpreter's exit: leave without waiting for it.
        logging.shutdown()
        sys.stdout.flush()
        os._exit(0)
    return 0


async def close_on_signal(service, program, server: Server, registry: BackendRegistry) -> bool:
    """Serve until SIGINT/SIGTERM, then close the sessions and the backends within
    SHUTDOWN_SECONDS; True when a session was still busy at the end."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()

    def on_signal() -> None:
        if stop.is_set():
            log.warning("second signal: exiting at once")
            os._exit(1)
        stop.set()

    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, on_signal)
        except (NotImplementedError, RuntimeError):
            pass
    await stop.wait()
    deadline = loop.time() + SHUTDOWN_SECONDS
    sessions = list(service.sessions.values())
    log.info("cricket server stopping: closing %d live session(s)", len(sessions))
    await server.close()
    for connection_id in list(program.sessions):
        program.on_disconnect(connection_id)      # as if each client hung up (its hook may come later)
    for session in sessions:
        service.close_session(session)      # also cancels their kernels
    # Let the sessions free what they hold before the backends go.
    waiting = [loop.run_in_executor(None, s.worker.shutdown, True) for s in sessions]
    stuck = False
    if waiting:
        done, pending = await asyncio.wait(waiting, timeout=max(0.1, deadline - loop.time()))
        if pending:
            log.warning("%d session(s) still busy at shutdown; their resources go with the process",
                        len(pending))
            stuck = True
    registry.close()
    return stuck


def serve_metrics(source, address: tuple[str, int]):
    """The metrics endpoint over ``source()`` (the figures, cricket.server.metrics)."""
    from .metrics import MetricsServer, MetricsUnavailable
    try:
        return MetricsServer(source, *address)
    except MetricsUnavailable as exc:
        raise ServerStartError(str(exc)) from None


def _inode(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_dev, st.st_ino


def take_unix_path(path: Path) -> None:
    """Make ``path`` free for the server's socket: a stale socket (nobody accepts on it) is removed;
    a live one, anything that is not a socket, or a missing folder is a ServerStartError."""
    if not path.parent.is_dir():
        raise ServerStartError(f"--unix {path}: the folder {path.parent} does not exist; create it or "
                               "choose another path")
    if not path.exists() and not path.is_symlink():
        return
    if not path.is_socket():
        raise ServerStartError(f"--unix {path}: the path exists and is not a socket; remove it or "
                               "choose another path")
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.settimeout(2)
        probe.connect(str(path))
    except (ConnectionRefusedError, FileNotFoundError):
        log.info("removing the stale socket %s (nothing listens on it)", path)
        path.unlink(missing_ok=True)
        return
    except OSError as exc:
        raise ServerStartError(f"--unix {path}: cannot tell whether a server listens there ({exc})") from None
    finally:
        probe.close()
    raise ServerStartError(f"--unix {path}: another server is listening on it; stop that one or "
                           "choose another path")


_LISTEN_HINTS = {
    errno.EADDRINUSE: "another process listens on it (`ss -ltnp` names it); stop it or choose another port",
    errno.EADDRNOTAVAIL: "no interface of this host has that address; use one it has, or 0.0.0.0 for all",
    errno.EACCES: "ports below 1024 need privileges; choose a port from 1024 up",
    errno.ENOENT: "the folder does not exist; create it or choose another path",
}


async def _listen(server: Server, address, shown: str):
    try:
        return await server.listen(address)
    except socket.gaierror as exc:
        raise ServerStartError(f"cannot listen on {shown}: unknown host ({exc.strerror}); give an IP "
                               "address or a name this host resolves") from None
    except OSError as exc:
        raise listen_error(shown, exc) from None


def listen_error(shown: str, exc: OSError) -> ServerStartError:
    """The one-line error for a listener that cannot be bound at ``shown``."""
    hint = _LISTEN_HINTS.get(exc.errno, "check the address")
    return ServerStartError(f"cannot listen on {shown}: {exc.strerror or exc}; {hint}")


def run_server(config: ServerConfig) -> int:
    # Sessions' workers and the event loop share the GIL: a shorter switch interval keeps other
    # clients' calls prompt while one session's emulated kernel computes (1 ms: NULL calls answer
    # in about 1.5 ms instead of 6-12 ms during a long emu kernel on a loaded two-core machine).
    sys.setswitchinterval(float(os.environ.get("CRICKET_SWITCH_INTERVAL", "0.001")))
    loop = new_event_loop()
    try:
        return loop.run_until_complete(serve(config))
    finally:
        loop.close()
