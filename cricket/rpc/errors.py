"""The exceptions of the ONC RPC runtime: one hierarchy rooted at :class:`RpcError`.

Errors a server reports in its reply (RFC 5531 accept_stat / reject_stat) have one class each, so
a caller can catch exactly the status it cares about; transport failures (connection lost, timeout,
over-size record) have theirs.
"""
from __future__ import annotations

from .constants import AcceptStat, AuthStat


class RpcError(Exception):
    """Base class of every error raised by :mod:`cricket.rpc`."""


# --- statuses carried by a reply ------------------------------------------------------------------

class ReplyError(RpcError):
    """The server answered, but not with SUCCESS."""


class ProgUnavail(ReplyError):
    """PROG_UNAVAIL: the server does not serve this program number."""


class ProgMismatch(ReplyError):
    """PROG_MISMATCH: the program is served, but not this version; ``low``..``high`` are."""

    def __init__(self, message: str, low: int, high: int) -> None:
        super().__init__(message)
        self.low = low
        self.high = high


class ProcUnavail(ReplyError):
    """PROC_UNAVAIL: the program and version are served, but not this procedure."""


class GarbageArgs(ReplyError):
    """GARBAGE_ARGS: the server could not decode the arguments."""


class SystemErr(ReplyError):
    """SYSTEM_ERR: the server failed while running the procedure."""


class RpcMismatch(ReplyError):
    """MSG_DENIED / RPC_MISMATCH: the server speaks RPC versions ``low``..``high`` only."""

    def __init__(self, message: str, low: int, high: int) -> None:
        super().__init__(message)
        self.low = low
        self.high = high


class AuthError(ReplyError):
    """MSG_DENIED / AUTH_ERROR with the ``auth_stat`` the server gave (``.stat``).

    Servers raise it from a flavor's ``authenticate`` to reject a credential.
    """

    def __init__(self, stat: int, message: str | None = None) -> None:
        self.stat = AuthStat(stat) if stat in AuthStat._value2member_map_ else stat
        name = self.stat.name if isinstance(self.stat, AuthStat) else f"auth_stat {stat}"
        hint = _AUTH_HINTS.get(stat, "")
        super().__init__(message or f"authentication rejected: {name}{hint}")


_AUTH_HINTS = {AuthStat.AUTH_TOOWEAK: " (the server requires RPC-over-TLS before any call: connect "
                                      "with TLS, for cricket clients CRICKET_TLS=1)"}


ACCEPT_ERRORS: dict[int, type[ReplyError]] = {
    AcceptStat.PROG_UNAVAIL: ProgUnavail,
    AcceptStat.PROC_UNAVAIL: ProcUnavail,
    AcceptStat.GARBAGE_ARGS: GarbageArgs,
    AcceptStat.SYSTEM_ERR: SystemErr,
}


# --- transport and protocol failures --------------------------------------------------------------

class ProtocolError(RpcError):
    """The peer sent bytes that are not a valid RPC message."""


class RecordTooLarge(ProtocolError):
    """A record (announced by its fragment headers) is larger than the configured maximum."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"RPC record of at least {size} bytes exceeds the maximum of {limit} bytes; "
                         "raise max_record_size on both ends if such records are expected")
        self.size = size
        self.limit = limit


class RpcConnectionError(RpcError, ConnectionError):
    """The connection to the peer could not be made or was lost."""


class TlsError(RpcConnectionError):
    """RPC-over-TLS could not be set up (or a secret would go in clear); the message says why and
    what to do."""


class RpcTimeout(RpcError, TimeoutError):
    """No reply arrived within the configured timeout."""
