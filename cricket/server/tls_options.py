"""The server's network-security options: RPC-over-TLS (``--tls-*``), and the refusal to listen
on a non-loopback address with no way to tell clients apart (``--insecure`` overrides it)."""
from __future__ import annotations

import argparse
import logging
import ssl
from typing import Any

from ..rpc.tls import ServerTls, server_context
from ..rpc.transport import is_loopback

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("network security (RPC-over-TLS, RFC 9289)")
    group.add_argument("--tls-cert", metavar="FILE",
                       help="offer TLS with this PEM certificate (chain); needs --tls-key")
    group.add_argument("--tls-key", metavar="FILE", help="the private key of --tls-cert")
    group.add_argument("--tls-required", action="store_true",
                       help="refuse every call before the TLS handshake (AUTH_ERROR); "
                            "without it plain clients are served too")
    group.add_argument("--tls-client-ca", metavar="FILE",
                       help="mutual TLS: clients must show a certificate this CA signed; its "
                            "subject is the session's identity in the log")
    group.add_argument("--insecure", action="store_true",
                       help="listen on a non-loopback address without --token or client certificates")


def server_tls(args: argparse.Namespace) -> ServerTls | None:
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


def exposure_problem(host: str, port: int, token: str, tls: ServerTls | None,
                     insecure: bool) -> str | None:
    """Why listening as configured would let anyone who reaches the port in, or None."""
    if insecure or is_loopback(host) or host == "localhost" or token or (tls is not None and tls.mutual and tls.required):
        return None
    return (f"refusing to listen on {host}:{port} with no authentication: anyone reaching the port could "
            "use the GPU. Give --token (and TLS: --tls-cert/--tls-key), or --tls-client-ca with "
            "--tls-required, or --insecure to accept that")


def note_identity(program: Any, connection_id: int, subject: str | None) -> None:
    """After a TLS handshake: the client certificate's subject becomes part of the session's peer
    (shown in the log and wherever sessions are listed)."""
    session = program.sessions.get(connection_id)
    if session is not None and subject:
        session.peer = f"{session.peer} [{subject}]"
        log.info("session %d: TLS client certificate %s", session.id, subject)
