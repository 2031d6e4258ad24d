"""Who is at the other end of a connection: the address for TCP, the process and user for a Unix
socket (the kernel's SO_PEERCRED, which the client cannot forge)."""
from __future__ import annotations

import pwd
import socket
import struct
from typing import Any

_UCRED = struct.Struct("3i")      # struct ucred: pid, uid, gid


def peer_credentials(sock: Any) -> tuple[int, int] | None:
    """``(pid, uid)`` of a Unix socket's peer; None for any other socket."""
    if sock is None or getattr(sock, "family", None) != socket.AF_UNIX:
        return None
    try:
        pid, uid, _ = _UCRED.unpack(sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _UCRED.size))
    except (OSError, AttributeError):
        return None
    return pid, uid


def describe_peer(peername: Any, credentials: tuple[int, int] | None) -> str:
    """``pid 4242 user alice`` for a Unix socket, ``HOST:PORT`` for TCP."""
    if isinstance(peername, tuple) and len(peername) >= 2:
        return f"{peername[0]}:{peername[1]}"
    if credentials is not None:
        return f"pid {credentials[0]} user {user_name(credentials[1])}"
    return str(peername or "unknown peer")


def user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)
