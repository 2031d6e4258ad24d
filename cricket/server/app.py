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

from ..backends.registry import BackendLoadError, BackendRegistry, parse_backend_option
from ..rpc import Server
from ..rpc.errors import RpcError
from ..rpc.constants import DEFAULT_MAX_RECORD
from ..rpc.transport import new_event_loop
from .limits import DEFAULT_HELLO_TIMEOUT, DEFAULT_MAX_SESSIONS, PRE_HELLO_MAX_RECORD

log = logging.getLogger(__name__)

# A record must hold the largest argument cricket.x allows (one module image) plus headers.
MAX_RECORD = max(DEFAULT_MAX_RECORD, (512 << 20) + (1 << 16))


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
    register: bool = False
    poll_us: float = 100.0
    max_sessions: int = DEFAULT_MAX_SESSIONS
    hello_timeout: float = DEFAULT_HELLO_TIMEOUT
    allow_backend_import: bool = False


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


def build(config: ServerConfig, registry: BackendRegistry | None = None):
    """The service and the RPC server for ``config`` (not listening yet)."""
    from .images import ImageCache
    from ..protocol import PROCEDURES
    from .program import HTOD_SINK_FIXED, CricketProgram
    from .service import CricketService
    registry = registry or BackendRegistry()
    service = CricketService(registry, token=config.token, admin_token=config.admin_token,
                             image_cache=ImageCache(config.image_cache_bytes),
                             allow_backend_import=config.allow_backend_import)
    program = CricketProgram(service)
    server = Server([program], max_record_size=MAX_RECORD, on_connect=program.on_connect,
                    on_disconnect=program.on_disconnect, poll=config.poll_us / 1e6,
                    unadmitted_record_size=PRE_HELLO_MAX_RECORD,
                    admit_timeout=config.hello_timeout, max_connections=config.max_sessions)
    # Host-to-device bytes go from the socket straight into device memory where the backend allows.
    server.add_payload_sink(program.PROGRAM, program.VERSION, PROCEDURES["CR_MEMCPY_HTOD"],
                            HTOD_SINK_FIXED, program.receive_htod)
    return service, program, server


async def serve(config: ServerConfig) -> int:
    registry = BackendRegistry()
    loop = asyncio.get_running_loop()
    # Backends may take a while to initialise (a GPU driver): keep the loop free meanwhile.
    try:
        await loop.run_in_executor(None, load_backends, registry, config.backends, bool(config.backends))
        service, program, server = build(config, registry)
        socket_id = None
        if config.unix_path:
            path = Path(config.unix_path)
            _take_unix_path(path)
            address = await _listen(server, str(path), str(path))
            shown = str(path)
            socket_id = _inode(path)
        else:
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
        registry.close()
        raise
    log.info("cricket server listening on %s with backends %s (default %s)", shown,
             ", ".join(registry.loaded()) or "none", registry.default)
    print(f"cricket server listening on {shown}", flush=True)
    if config.ready_file:
        tmp = Path(config.ready_file + ".tmp")
        tmp.write_text(shown + "\n")
        os.replace(tmp, config.ready_file)
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, stop.set)
        except (NotImplementedError, RuntimeError):
            pass
    await stop.wait()
    log.info("cricket server stopping")
    sessions = list(service.sessions.values())
    await server.close()
    for session in sessions:
        service.close_session(session)
    # Let the sessions free what they hold before the backends go (a running kernel may delay it).
    waiting = [loop.run_in_executor(None, s.worker.shutdown, True) for s in sessions]
    if waiting:
        done, pending = await asyncio.wait(waiting, timeout=10)
        if pending:
            log.warning("%d session(s) still busy at shutdown; their resources go with the process",
                        len(pending))
    registry.close()
    if config.unix_path and _inode(Path(config.unix_path)) == socket_id:
        Path(config.unix_path).unlink(missing_ok=True)     # ours still: no other server took the path
    return 0


def _inode(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _take_unix_path(path: Path) -> None:
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
        hint = _LISTEN_HINTS.get(exc.errno, "check the address")
        raise ServerStartError(f"cannot listen on {shown}: {exc.strerror or exc}; {hint}") from None


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
