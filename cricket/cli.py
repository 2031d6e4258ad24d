"""The ``cricket`` command.

Each subcommand lives in the feature package it drives; a module listed here
provides ``add_arguments(parser)`` and ``main(args) -> int``. A feature that is
not built yet simply does not appear.
"""
from __future__ import annotations

import argparse
import importlib
import sys

from . import __version__, _log

SUBCOMMANDS = {
    "server": ("cricket.server.cli", "run the cricket server"),
    "run": ("cricket.client.run_cli", "run a CUDA program with its calls remoted"),
    "fatbin": ("cricket.fatbin.cli", "list or extract the device code in a binary"),
    "bench": ("cricket.bench_cli", "run the microbenchmark suite"),
    "tls-keygen": ("cricket.tls_keygen", "make a CA, server and client certificate for TLS"),
    "status": ("cricket.watch.status_cli", "show a running server and its sessions"),
    "top": ("cricket.watch.top_cli", "watch a running server's sessions, refreshing"),
}


EXAMPLES = """\
examples:
  cricket run -- ./saxpy                       run a CUDA program on a local server (GPU, else emu)
  cricket server --listen 0.0.0.0:7391 --token SECRET
                                               serve this host's GPU to other machines
  CRICKET_SERVER=gpuhost:7391 cricket run -- python train.py
  cricket status --server gpuhost:7391         who uses that server, and how
  cricket COMMAND --help                       each command's options and examples
"""


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every subcommand; given ``command``, only that one's module is imported (the
    others keep their line in the help), so that a start pays for the imports of its own command."""
    parser = argparse.ArgumentParser(
        prog="cricket", formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EXAMPLES,
        description="Run CUDA programs against a GPU elsewhere, or on the CPU. "
                    "Log level: CRICKET_LOG=debug|info|warning|error.")
    parser.add_argument("--version", action="version", version=f"cricket {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module_name, help_text) in SUBCOMMANDS.items():
        if command in SUBCOMMANDS and name != command:
            sub.add_parser(name, help=help_text)
            continue
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name and module_name.startswith(exc.name):
                continue  # feature not present in this build
            raise
        p = sub.add_parser(name, help=help_text, description=(module.__doc__ or help_text).strip())
        module.add_arguments(p)
        p.set_defaults(_main=module.main)
    return parser


def main(argv: list[str] | None = None) -> int:
    _log.configure()
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(next((a for a in argv if not a.startswith("-")), None))
    args = parser.parse_args(argv)
    if not getattr(args, "_main", None):
        parser.print_help()
        return 2
    return int(args._main(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
