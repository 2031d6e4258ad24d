"""What a handler knows about the call it is running: :func:`current_call`, and :data:`NO_REPLY`."""
from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from .errors import RpcError


@dataclass(slots=True)
class CallContext:
    """The call being served. ``credentials`` is what the flavor's authenticator returned
    (``None`` for AUTH_NONE, an :class:`~cricket.rpc.auth.AuthSysParms` for AUTH_SYS);
    ``tls_identity`` the client certificate's subject on a mutual-TLS connection
    (:mod:`cricket.rpc.tls`)."""

    connection_id: int
    peer: Any
    xid: int
    prog: int
    vers: int
    proc: int
    cred_flavor: int
    cred_body: bytes
    credentials: Any
    tls_identity: str | None = None   # the subject of the client's TLS certificate (mutual TLS)


class _NoReply:
    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "NO_REPLY"


NO_REPLY = _NoReply()
"""Return this from a handler (or its coroutine) to send no reply: the call was a batched one."""

# The server sets a plain tuple per call (cheap); current_call() builds the CallContext from it:
# (connection, xid, prog, vers, proc, cred_flavor, cred_body, credentials).
_current: ContextVar[tuple] = ContextVar("cricket_rpc_call")


def current_connection_id() -> int:
    """The connection of the call the running handler serves (what most handlers need: cheaper
    than :func:`current_call`, which builds the whole context); raises :class:`RpcError` outside
    a handler."""
    try:
        return _current.get()[0].id
    except LookupError:
        raise RpcError("current_connection_id() was used outside of an RPC handler") from None


def admit_connection() -> None:
    """Trust the connection of the call the running handler serves (it authenticated): its records
    may then reach the server's ``max_record_size`` and no admission timeout closes it (see
    :class:`cricket.rpc.server.Server`). Call on the event loop's thread."""
    try:
        conn = _current.get()[0]
    except LookupError:
        raise RpcError("admit_connection() was used outside of an RPC handler") from None
    conn.admit()


def current_call() -> CallContext:
    """The call the running handler serves; raises :class:`RpcError` outside a handler."""
    try:
        conn, xid, prog, vers, proc, cred_flavor, cred_body, credentials = _current.get()
    except LookupError:
        raise RpcError("current_call() was used outside of an RPC handler") from None
    return CallContext(conn.id, conn.peer, xid, prog, vers, proc, cred_flavor, cred_body,
                       credentials, getattr(conn, "tls_identity", None))


def current_socket() -> Any:
    """The socket of the running handler's connection (a server reads peer credentials from a
    Unix socket), or None where the transport has none; raises :class:`RpcError` outside a handler."""
    try:
        conn = _current.get()[0]
    except LookupError:
        raise RpcError("current_socket() was used outside of an RPC handler") from None
    transport = getattr(conn, "transport", None)
    return transport.get_extra_info("socket") if transport is not None else None
