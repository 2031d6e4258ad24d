"""Numbers of the RPC protocol (RFC 5531 §9, Appendix A) and the runtime's defaults."""
from __future__ import annotations

from enum import IntEnum

RPC_VERSION = 2
MAX_AUTH_BYTES = 400          # opaque_auth body<400>
MAX_MACHINE_NAME = 255        # authsys_parms.machinename<255>
MAX_GROUPS = 16               # authsys_parms.gids<16>

LAST_FRAGMENT = 0x80000000    # record-marking header bit 31
MAX_FRAGMENT = 0x7FFFFFFF     # largest length a fragment header can carry
DEFAULT_MAX_RECORD = 64 * 1024 * 1024


class MsgType(IntEnum):
    CALL = 0
    REPLY = 1


class ReplyStat(IntEnum):
    MSG_ACCEPTED = 0
    MSG_DENIED = 1


class AcceptStat(IntEnum):
    SUCCESS = 0
    PROG_UNAVAIL = 1
    PROG_MISMATCH = 2
    PROC_UNAVAIL = 3
    GARBAGE_ARGS = 4
    SYSTEM_ERR = 5


class RejectStat(IntEnum):
    RPC_MISMATCH = 0
    AUTH_ERROR = 1


class AuthStat(IntEnum):
    AUTH_OK = 0
    AUTH_BADCRED = 1
    AUTH_REJECTEDCRED = 2
    AUTH_BADVERF = 3
    AUTH_REJECTEDVERF = 4
    AUTH_TOOWEAK = 5
    AUTH_INVALIDRESP = 6
    AUTH_FAILED = 7
    AUTH_KERB_GENERIC = 8
    AUTH_TIMEEXPIRE = 9
    AUTH_TKT_FILE = 10
    AUTH_DECODE = 11
    AUTH_NET_ADDR = 12
    RPCSEC_GSS_CREDPROBLEM = 13
    RPCSEC_GSS_CTXPROBLEM = 14


class AuthFlavor(IntEnum):
    AUTH_NONE = 0
    AUTH_SYS = 1
    AUTH_SHORT = 2
    AUTH_DH = 3
    RPCSEC_GSS = 6
    AUTH_TLS = 7
