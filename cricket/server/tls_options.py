"""The server's network-security options: RPC-over-TLS (``--tls-*``), and the refusal to listen
on a non-loopback address with no way to tell clients apart (``--insecure`` overrides it)."""
from __future__ import annotations

import argparse
import logging
from typing import Any

from ..rpc.tls import ServerTls
from ..rpc.tls_cli import add_tls_arguments
from ..rpc.transport import is_loopback

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    group = add_tls_arguments(parser)
    group.add_argument("--insecure", action="store_true",
                       help="listen on a non-loopback address without --token or client certificates")


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
