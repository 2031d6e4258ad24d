"""Who is at the other end of a connection: the address for TCP, the process and user for a Unix
socket (the kernel's SO_PEERCRED, which the client cannot forge)."""
from __future__ import annotations

import pwd
import socket
import struct
from typing import Any

_UCRED = struct.Struct("3i")      # struct ucred: pid, uid, gid


def describe_peer(sock: Any, peername: Any) -> str:
    """``pid 4242 user alice`` for a Unix socket, ``HOST:PORT`` for TCP, ``unknown peer`` else."""
    if isinstance(peername, tuple) and len(peername) >= 2:
        return f"{peername[0]}:{peername[1]}"
    if sock is not None and getattr(sock, "family", None) == socket.AF_UNIX:
        try:
            pid, uid, _ = _UCRED.unpack(sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _UCRED.size))
        except (OSError, AttributeError):
            return "unix socket"
        return f"pid {pid} user {user_name(uid)}"
    return str(peername or "unknown peer")


def user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)
