"""``python -m cricket.rpc serve``: serve skeleton classes (``module:Class``) on an address.

Example::

    python -m cricket.rpc serve --listen 127.0.0.1:20099 --register mypkg.calc:CalcImpl

(``--register`` is a flag: it registers every program with the local rpcbind.)
"""
from __future__ import annotations

import argparse
import asyncio
import importlib
import logging
import signal
import sys

from cricket._log import configure

from .constants import DEFAULT_MAX_RECORD
from .errors import RpcError
from .server import Server
from .tls_cli import add_tls_arguments, server_tls_from_args
from .transport import parse_address, run

log = logging.getLogger("cricket.rpc")


class UsageError(Exception):
    """A mistake in the command line or its environment; the message says what to do (one line)."""


def _load(spec: str):
    module, sep, name = spec.partition(":")
    if not sep or not module or not name:
        raise UsageError(f"{spec!r}: give a skeleton implementation as module:Class")
    try:
        obj = getattr(importlib.import_module(module), name)
    except ImportError as exc:
        raise UsageError(f"{spec!r}: cannot import {module} ({exc}); is it on PYTHONPATH?") from None
    except AttributeError:
        raise UsageError(f"{spec!r}: module {module} has no {name}") from None
    impl = obj() if isinstance(obj, type) else obj
    if not all(hasattr(impl, a) for a in ("PROGRAM", "VERSION")):
        raise UsageError(f"{spec!r} is not a skeleton implementation (a subclass of an rpcgen-generated "
                         "<VERSION>_Server class, with PROGRAM and VERSION)")
    return impl


def _address(text: str):
    try:
        return parse_address(text)
    except ValueError as exc:
        raise UsageError(f"--listen: {exc}") from None


SERVE_DESCRIPTION = """\
Serve ONC RPC programs implemented in Python on one or more addresses, until SIGINT or SIGTERM.

Each module:Class names an implementation: a subclass of the <VERSION>_Server skeleton that
`python -m rpcgen FILE.x` generates, importable from PYTHONPATH (an instance works too). Once
ready it prints one line per listener ("listening HOST:PORT" or "listening PATH"), then each
program and version number in decimal (as rpcinfo takes them) and in hex."""

SERVE_EXAMPLES = """\
examples:
  python -m cricket.rpc serve --listen 127.0.0.1:20099 calc_impl:CalcV1
  python -m cricket.rpc serve --listen /tmp/calc.sock --listen 0.0.0.0:0 --register calc_impl:CalcV1
                                       # then: rpcinfo -T tcp 127.0.0.1 PROGRAM VERSION
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m cricket.rpc",
                                     description="ONC RPC tools; `serve --help` for the server.",
                                     epilog=SERVE_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="serve rpcgen skeleton implementations",
                           description=SERVE_DESCRIPTION, epilog=SERVE_EXAMPLES,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    serve.add_argument("skeletons", nargs="+", metavar="module:Class",
                       help="an rpcgen-generated skeleton's implementation, as module:Class")
    serve.add_argument("--listen", action="append", default=[],
                       help="host:port or a Unix socket path (repeatable; default 127.0.0.1:0)")
    serve.add_argument("--register", action="store_true",
                       help="register the programs with the rpcbind running on this host")
    serve.add_argument("--max-record", type=int, default=DEFAULT_MAX_RECORD,
                       help="largest record accepted, in bytes")
    serve.add_argument("--workers", type=int, default=1, metavar="N",
                       help="serve from N processes, each with its own event loop; each new "
                            "connection goes to the next one in turn and stays there (default 1)")
    add_tls_arguments(serve)
    return parser


def program_line(program: int, version: int) -> str:
    """``program 536870913 (0x20000001) version 1 (0x1)``."""
    return f"program {program} (0x{program:08x}) version {version} (0x{version:x})"


def _print_ready(bound: list, impls: list) -> None:
    """One line per listener on stdout, once ready, so scripts can learn an ephemeral port."""
    for b in bound:
        print(f"listening {b[0]}:{b[1]}" if isinstance(b, tuple) else f"listening {b}", flush=True)
    for impl in impls:
        print(program_line(impl.PROGRAM, impl.VERSION), flush=True)


def _new_server(args: argparse.Namespace, impls: list) -> Server:
    try:
        tls = server_tls_from_args(args)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return Server(impls, max_record_size=args.max_record, tls=tls)


async def _until_signalled(server: Server) -> int:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await server.close()
    return 0


def _serve_workers(args: argparse.Namespace) -> int:
    """``--workers N`` (N > 1): bind here, serve from N forked processes (cricket.rpc.server_workers)."""
    from .server_workers import bind_listeners, receive_connections, serve_in_workers
    if args.register:
        raise UsageError("--register works with one worker only; leave out --workers or --register")
    addresses = [_address(text) for text in args.listen or ["127.0.0.1:0"]]
    impls = [_load(s) for s in args.skeletons]
    _new_server(args, impls)        # the TLS options are checked once, before any fork
    try:
        listeners, bound = bind_listeners(addresses)
    except OSError as exc:
        raise UsageError(f"cannot listen: {exc.strerror or exc}") from None

    async def worker(pair, ready) -> int:
        server = _new_server(args, impls)
        receive_connections(pair, lambda sock: asyncio.ensure_future(server.adopt(sock)))
        serving = _until_signalled(server)
        ready()
        return await serving

    return serve_in_workers(listeners, args.workers, lambda pair, ready: run(worker(pair, ready)),
                            [b for b in bound if isinstance(b, str)], lambda: _print_ready(bound, impls))


async def _serve(args: argparse.Namespace) -> int:
    addresses = [(text, _address(text)) for text in args.listen or ["127.0.0.1:0"]]
    impls = [_load(s) for s in args.skeletons]
    server = _new_server(args, impls)
    bound = []
    for text, address in addresses:
        try:
            bound.append(await server.listen(address))
        except OSError as exc:
            await server.close()
            raise UsageError(f"cannot listen on {text}: {exc.strerror or exc}") from None
    if args.register:
        try:
            await server.register()
        except (OSError, RpcError) as exc:
            await server.close()
            raise UsageError(f"cannot register with rpcbind ({exc}); start rpcbind or leave out --register") from None
    _print_ready(bound, impls)
    return await _until_signalled(server)


def main(argv: list[str] | None = None) -> int:
    configure("INFO")
    args = build_parser().parse_args(argv)
    try:
        if args.workers < 1:
            raise UsageError(f"--workers {args.workers}: give at least 1")
        return _serve_workers(args) if args.workers > 1 else run(_serve(args))
    except UsageError as exc:
        print(f"python -m cricket.rpc serve: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
