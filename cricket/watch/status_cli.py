"""Show a running server: version, backends and devices, uptime, and each session's peer, memory,
modules, streams, calls, bytes copied, kernels and last error.

Asking needs the admin token (--token, default $CRICKET_ADMIN_TOKEN, else $CRICKET_TOKEN) or a
Unix socket connection as the server's user. --probe needs neither: it only checks that the server
answers (for health checks).

examples:
  cricket status                              # the server at $CRICKET_SERVER or 127.0.0.1:7391
  cricket status --server /run/cricket.sock --json
  cricket status --server gpuhost:7391 --probe --timeout 2   # exit status 0: it answers
"""
from __future__ import annotations

import argparse
import json
import sys

from .query import StatusClient, StatusError, operator_token, probe, server_address
from .report import render


def add_common(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("--server", metavar="ADDR",
                        help="HOST:PORT or a Unix socket path (default $CRICKET_SERVER, else 127.0.0.1:7391)")
    parser.add_argument("--token", default=None,
                        help="token to send (default $CRICKET_ADMIN_TOKEN, else $CRICKET_TOKEN)")
    parser.add_argument("--timeout", type=float, default=5.0, metavar="SECONDS",
                        help="give up on a server that does not answer this long (default 5)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_common(parser)
    parser.add_argument("--probe", action="store_true",
                        help="only check that the server answers: exit status 0 if so, 1 if not")
    parser.add_argument("--json", action="store_true", help="print the status as JSON")


def main(args: argparse.Namespace) -> int:
    address = server_address(args.server)
    try:
        if args.probe:
            probe(address, args.timeout)
            print(f"cricket server at {address} answers")
            return 0
        with StatusClient(address, operator_token(args.token), args.timeout) as client:
            status = client.status()
    except StatusError as exc:
        print(f"cricket status: {exc}", file=sys.stderr)
        return 1
    if args.json:
        json.dump({"address": address, **status}, sys.stdout, indent=2)
        print()
    else:
        sys.stdout.write(render(status, address))
    return 0
