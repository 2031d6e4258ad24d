"""Watch a running server's sessions, refreshed every few seconds (Ctrl-C ends): what
`cricket status` shows, with each session's calls per second.

examples:
  cricket top                                  # the server at $CRICKET_SERVER or 127.0.0.1:7391
  cricket top --server /run/cricket.sock --interval 1
  cricket top --once                           # one report, with rates over --interval
"""
from __future__ import annotations

import argparse
import sys
import time

from .query import StatusClient, StatusError, operator_token, server_address
from .report import call_rates, render
from .status_cli import add_common

CLEAR = "\x1b[H\x1b[2J"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_common(parser)
    parser.add_argument("--interval", type=float, default=2.0, metavar="SECONDS",
                        help="seconds between refreshes (default 2)")
    parser.add_argument("--once", action="store_true",
                        help="print one report (rates measured over one interval) and exit")


def main(args: argparse.Namespace) -> int:
    address = server_address(args.server)
    interval = max(args.interval, 0.1)
    clear = sys.stdout.isatty() and not args.once
    try:
        with StatusClient(address, operator_token(args.token), args.timeout) as client:
            before, taken = client.status(), time.monotonic()
            while True:
                time.sleep(interval)
                now = client.status()
                rates = call_rates(before, now, time.monotonic() - taken)
                before, taken = now, time.monotonic()
                sys.stdout.write((CLEAR if clear else "") + render(now, address, rates))
                sys.stdout.flush()
                if args.once:
                    return 0
                if not clear:
                    print()
    except StatusError as exc:
        print(f"cricket top: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
