"""Serve CUDA to cricket clients over ONC RPC (TCP or a Unix socket).

Backends are named by type (emu, cuda, or a cricket.backends entry point) or by module:Class;
with none named the server loads cuda when a GPU is usable, else emu.
Environment: CRICKET_TOKEN (client token), CRICKET_ADMIN_TOKEN (token for LOADBACKEND and
`cricket status` over TCP), CRICKET_LOG (log level; the server logs sessions and its lifecycle at
info by default). On emu each session's kernels run in a worker process of its own: a client that disconnects has
its kernels stopped. SIGTERM or SIGINT stops the server: it stops accepting, cancels kernels,
closes sessions and exits within 5 s; a second signal exits at once.
"""
from __future__ import annotations

import argparse
import logging
import os
import sys

from .. import _log
from .._env import MAX_POLL_US, parse_size, poll_us
from ..rpc.tls_cli import server_tls_from_args
from . import tls_options
from .limits import DEFAULT_HELLO_TIMEOUT, DEFAULT_MAX_IMAGE, DEFAULT_MAX_SESSIONS, PRE_HELLO_MAX_RECORD

log = logging.getLogger(__name__)

DEFAULT_PORT = 7391

EXAMPLES = """\
examples:
  cricket server                                   TCP 127.0.0.1:7391, cuda if a GPU is usable, else emu
  cricket server --unix /run/cricket.sock --backend emu=memory=4G
  cricket server --listen 0.0.0.0:7391 --token s3cret --admin-token adm1n --metrics 0.0.0.0:9391
  cricket server --list-backends                   what can be loaded here, and why not
  cricket server --workers 4 --backend emu         serve from 4 processes (many clients; IPC handles
                                                   only between sessions of one worker)
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EXAMPLES
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--listen", metavar="HOST:PORT",
                       help=f"TCP address to listen on (default 127.0.0.1:{DEFAULT_PORT}; port 0 picks one)")
    where.add_argument("--unix", metavar="PATH", help="listen on a Unix domain socket instead of TCP")
    parser.add_argument("--backend", metavar="NAME[=SPEC]", action="append", default=[],
                        help="load a backend at start (repeatable; the first loaded is the default). "
                             "SPECs: emu=memory=SIZE[,cores=N] (arena per session, e.g. 4G; most cores one "
                             "launch spreads over, default all); "
                             "cuda=ORDINAL,...[,shared] (a CUDA context per session; shared: sessions share "
                             "each GPU's context, so one session's kernels can reach another's memory)")
    parser.add_argument("--token", default=os.environ.get("CRICKET_TOKEN", ""),
                        help="clients must send this token in HELLO (default: $CRICKET_TOKEN, none)")
    parser.add_argument("--admin-token", default=os.environ.get("CRICKET_ADMIN_TOKEN", ""),
                        help="a client that sends this token may load backends while the server runs")
    parser.add_argument("--list-backends", action="store_true",
                        help="list the backends that can be loaded here, with the reason where one cannot")
    parser.add_argument("--ready-file", metavar="PATH",
                        help="write the listening address to PATH once the server accepts connections")
    parser.add_argument("--register", action="store_true",
                        help="register with the local rpcbind (TCP only), so `rpcinfo -p` lists the server")
    parser.add_argument("--image-cache-mb", type=int, default=1024,
                        help="memory for module images shared between sessions (default 1024 MiB)")
    parser.add_argument("--poll-us", type=float, metavar="MICROSECONDS",
                        default=_poll_default(),
                        help="after a call arrives, keep polling for the next one this long instead of "
                             "sleeping, yielding the CPU between polls: saves a wake-up per small call "
                             "on an idle machine (default 100, or $CRICKET_SERVER_POLL_US; 0: sleep at once)")
    parser.add_argument("--max-sessions", type=_positive(int), metavar="N", default=DEFAULT_MAX_SESSIONS,
                        help="most client connections at once; the calls of one more are answered with "
                             "RPC SYSTEM_ERR and it is closed "
                             f"(default {DEFAULT_MAX_SESSIONS})")
    parser.add_argument("--hello-timeout", type=_positive(float), metavar="SECONDS", default=DEFAULT_HELLO_TIMEOUT,
                        help="close a connection that has not completed HELLO this long after "
                             f"connecting; until then its records may not exceed "
                             f"{PRE_HELLO_MAX_RECORD >> 10} KiB (default {DEFAULT_HELLO_TIMEOUT:g})")
    parser.add_argument("--metrics", metavar="HOST:PORT",
                        help="serve Prometheus metrics at http://HOST:PORT/metrics (needs prometheus_client; "
                             "port 0 picks one, logged at start)")
    parser.add_argument("--kernel-timeout", type=_positive(float), metavar="SECONDS", default=None,
                        help="end a kernel that runs longer than this with cudaErrorLaunchTimeout for its "
                             "session only (default: no limit, as on a compute GPU; emu backend)")
    parser.add_argument("--allow-backend-import", action="store_true",
                        help="let an admin client load a backend by module:Class, importing that "
                             "module on the server (without it clients load only backends named "
                             "by entry point or on this command line)")
    parser.add_argument("--max-image", type=_size, metavar="SIZE", default=DEFAULT_MAX_IMAGE,
                        help="largest module image a client may send; a larger record closes its "
                             f"connection (default {DEFAULT_MAX_IMAGE >> 20}M)")
    parser.add_argument("--session-memory", type=_size, metavar="SIZE", default=None,
                        help="device memory one session may allocate (e.g. 4G); past it an "
                             "allocation fails with cudaErrorMemoryAllocation for that session only, "
                             "and cudaMemGetInfo reports the share left (default: no bound of its own)")
    parser.add_argument("--device-memory", type=_size, metavar="SIZE", default=None,
                        help="device memory all sessions together may allocate (default: half of "
                             "this host's memory for emulated devices, none beyond the GPU's own "
                             "for real ones; given, it bounds both)")
    parser.add_argument("--workers", type=int, metavar="N", default=1,
                        help="serve from N processes, each connection in one of them in turn: more "
                             "calls per second with many clients; the server-wide bounds, `cricket "
                             "status` and --metrics cover all of them (default 1; see "
                             "docs/server-workers.md)")
    tls_options.add_arguments(parser)


def _positive(kind: type):
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not value > 0:
            raise argparse.ArgumentTypeError(f"{text!r} must be greater than 0")
        return value
    parse.__name__ = kind.__name__
    return parse


def _size(text: str) -> int:
    try:
        value = parse_size(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size (e.g. 512M, 4G)") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be greater than 0")
    return value


def _poll_default() -> float:
    us, complaint = poll_us("CRICKET_SERVER_POLL_US", 100.0)
    if complaint:
        print(f"cricket server: {complaint}", file=sys.stderr)
    return us


def parse_listen(text: str, option: str = "--listen") -> tuple[str, int]:
    from ..rpc.transport import MAX_PORT
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"{option} {text!r}: use HOST:PORT, e.g. 127.0.0.1:{DEFAULT_PORT}")
    if int(port) > MAX_PORT:
        raise ValueError(f"{option} {text!r}: port {int(port)} is out of range; use 0-{MAX_PORT} (0 picks a free one)")
    return host.strip("[]") or "127.0.0.1", int(port)


def list_backends() -> int:
    from ..backends.registry import BackendRegistry
    rows = BackendRegistry().status()
    width = max(len(r.type) for r in rows) if rows else 4
    for r in rows:
        state = "available" if r.available else "unavailable"
        print(f"{r.type:<{width}}  {state:<11}  {r.target}  -  {r.reason}")
    return 0


def main(args: argparse.Namespace) -> int:
    if args.list_backends:
        return list_backends()
    _log.default_to("info")
    from .app import ServerConfig, run_server
    try:
        listen = parse_listen(args.listen) if args.listen else None
        tls = server_tls_from_args(args)
        metrics = parse_listen(args.metrics, "--metrics") if args.metrics else None
    except ValueError as exc:
        print(f"cricket server: {exc}", file=sys.stderr)
        return 2
    config = ServerConfig(
        host=listen[0] if listen else "127.0.0.1",
        port=listen[1] if listen else DEFAULT_PORT,
        unix_path=args.unix, backends=list(args.backend), token=args.token,
        admin_token=args.admin_token, ready_file=args.ready_file,
        image_cache_bytes=args.image_cache_mb << 20, register=args.register,
        poll_us=min(max(args.poll_us, 0.0), MAX_POLL_US), max_sessions=args.max_sessions,
        hello_timeout=args.hello_timeout, allow_backend_import=args.allow_backend_import,
        session_memory=args.session_memory, device_memory=args.device_memory,
        max_image=args.max_image, tls=tls, insecure=args.insecure,
        metrics=metrics, kernel_timeout=args.kernel_timeout)
    if config.register and config.unix_path:
        print("cricket server: --register works with TCP only (rpcbind maps TCP ports)", file=sys.stderr)
        return 2
    from .app import ServerStartError
    if args.workers != 1:
        from .workers import run_workers, usage_problem
        problem = usage_problem(config, args.workers)
        if problem:
            print(f"cricket server: {problem}", file=sys.stderr)
            return 2
    try:
        if args.workers != 1:
            return run_workers(config, args.workers)
        return run_server(config)
    except ServerStartError as exc:
        print(f"cricket server: {exc}", file=sys.stderr)
        return 1
