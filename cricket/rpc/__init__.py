"""ONC RPC v2 (RFC 5531) for any rpcgen interface: message layer, auth flavors, record marking,
TCP and Unix transports, a uvloop server, a blocking and an asyncio client."""
from __future__ import annotations

from .aclient import AsyncClient
from .auth import (Authenticator, AuthNone, AuthSys, AuthSysParms, ClientAuth, NoneAuthenticator,
                   SysAuthenticator)
from .client import Client, PendingCall
from .constants import (DEFAULT_MAX_RECORD, AcceptStat, AuthFlavor, AuthStat, MsgType,
                        RejectStat, ReplyStat)
from .context import NO_REPLY, CallContext, current_call
from .errors import (AuthError, GarbageArgs, ProcUnavail, ProgMismatch, ProgUnavail,
                     ProtocolError, RecordTooLarge, ReplyError, RpcConnectionError, RpcError,
                     RpcMismatch, RpcTimeout, SystemErr)
from .server import Server, ServerThread
from .transport import new_event_loop, parse_address, run

__all__ = [
    "AsyncClient", "Authenticator", "AuthNone", "AuthSys", "AuthSysParms", "ClientAuth",
    "NoneAuthenticator", "SysAuthenticator", "Client", "PendingCall", "DEFAULT_MAX_RECORD",
    "AcceptStat", "AuthFlavor", "AuthStat", "MsgType", "RejectStat", "ReplyStat", "NO_REPLY",
    "CallContext", "current_call", "AuthError", "GarbageArgs", "ProcUnavail", "ProgMismatch",
    "ProgUnavail", "ProtocolError", "RecordTooLarge", "ReplyError", "RpcConnectionError",
    "RpcError", "RpcMismatch", "RpcTimeout", "SystemErr", "Server", "ServerThread",
    "new_event_loop", "parse_address", "run",
]
