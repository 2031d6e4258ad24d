"""The client's network-security settings from the environment: ``CRICKET_TLS`` and its files,
and the rule that a secret goes in clear only to this host (``CRICKET_INSECURE=1`` overrides it).
Imports :mod:`ssl` only when ``CRICKET_TLS`` asks for TLS."""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from .errors import TlsError
from .transport import is_loopback, is_unix

if TYPE_CHECKING:
    from .tls import ClientTls


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "yes", "true", "on")


def client_tls(prog: int = 0, vers: int = 0) -> ClientTls | None:
    """The client's TLS settings from the environment, or None when ``CRICKET_TLS`` is not set:
    ``CRICKET_TLS_CA`` (PEM file of the CA to trust; default the system's), ``CRICKET_TLS_CERT``
    and ``CRICKET_TLS_KEY`` (a client certificate for mutual TLS), ``CRICKET_TLS_SERVER_NAME``
    (the name to check the server's certificate against; default the host connected to)."""
    if not _env_flag("CRICKET_TLS"):
        return None
    from .tls import ClientTls, client_context
    env = os.environ
    try:
        context = client_context(env.get("CRICKET_TLS_CA") or None, env.get("CRICKET_TLS_CERT") or None,
                                 env.get("CRICKET_TLS_KEY") or None)
    except (OSError, ValueError) as exc:   # ssl.SSLError is an OSError
        raise TlsError(f"CRICKET_TLS: the certificate files do not load ({exc}); check "
                       "CRICKET_TLS_CA, CRICKET_TLS_CERT and CRICKET_TLS_KEY") from None
    return ClientTls(context, env.get("CRICKET_TLS_SERVER_NAME") or None, prog, vers)


def check_secret_channel(address: Any, encrypted: bool, what: str = "the token") -> None:
    """Refuse to send a secret in clear to another host: fine inside TLS, over a Unix socket or to
    a loopback address, or with ``CRICKET_INSECURE=1``; else :class:`TlsError`."""
    if (encrypted or is_unix(address) or is_loopback(address[0]) or address[0] == "localhost"
            or _env_flag("CRICKET_INSECURE")):
        return
    raise TlsError(f"refusing to send {what} in clear to {address[0]}:{address[1]}: set CRICKET_TLS=1 "
                   "(the server needs --tls-cert/--tls-key), or CRICKET_INSECURE=1 to send it anyway")
