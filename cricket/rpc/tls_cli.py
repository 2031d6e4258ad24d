"""Command-line options that make a server offer RPC-over-TLS (``--tls-cert``, ``--tls-key``,
``--tls-required``, ``--tls-client-ca``), for ``cricket server`` and ``python -m cricket.rpc serve``."""
from __future__ import annotations

import argparse
import ssl

from .tls import ServerTls, server_context


def add_tls_arguments(parser: argparse.ArgumentParser) -> argparse._ArgumentGroup:
    group = parser.add_argument_group("network security (RPC-over-TLS, RFC 9289)")
    group.add_argument("--tls-cert", metavar="FILE",
                       help="offer TLS with this PEM certificate (chain); needs --tls-key")
    group.add_argument("--tls-key", metavar="FILE", help="the private key of --tls-cert")
    group.add_argument("--tls-required", action="store_true",
                       help="refuse every call before the TLS handshake (AUTH_ERROR); "
                            "without it plain clients are served too")
    group.add_argument("--tls-client-ca", metavar="FILE",
                       help="mutual TLS: clients must show a certificate this CA signed; its "
                            "subject is the connection's identity in the log")
    return group


def server_tls_from_args(args: argparse.Namespace) -> ServerTls | None:
    """The TLS settings the options ask for (None: no TLS); ``ValueError`` with a one-line reason."""
    if not args.tls_cert and not args.tls_key:
        if args.tls_required or args.tls_client_ca:
            raise ValueError("--tls-required and --tls-client-ca need --tls-cert and --tls-key")
        return None
    if not (args.tls_cert and args.tls_key):
        raise ValueError("--tls-cert and --tls-key go together")
    try:
        context = server_context(args.tls_cert, args.tls_key, args.tls_client_ca)
    except (OSError, ssl.SSLError) as exc:
        raise ValueError(f"the TLS certificate or key does not load: {exc}; "
                         "`cricket tls-keygen DIR` makes a set for a first try") from None
    return ServerTls(context, required=bool(args.tls_required))
