"""RPC message headers (RFC 5531 §9): encoding calls and replies, decoding both.

Headers are fixed layouts of 32-bit words, so they are read and written with precompiled
``struct.Struct`` objects; the arguments and results that follow are left to the XDR codecs.
"""
from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass

from .constants import (MAX_AUTH_BYTES, RPC_VERSION, AcceptStat, AuthStat, MsgType, RejectStat,
                        ReplyStat)
from .errors import (ACCEPT_ERRORS, AuthError, ProgMismatch, ProtocolError, RpcMismatch)

CALL_HEAD = struct.Struct(">6I")          # xid, CALL, rpcvers, prog, vers, proc
_U32 = struct.Struct(">I")
_U32x2 = struct.Struct(">II")
_SUCCESS_NONE = struct.Struct(">6I")      # xid, REPLY, MSG_ACCEPTED, AUTH_NONE, 0, SUCCESS
_ACCEPTED_HEAD = struct.Struct(">4I")     # xid, REPLY, MSG_ACCEPTED, verf flavor
_DENIED_MISMATCH = struct.Struct(">6I")   # xid, REPLY, MSG_DENIED, RPC_MISMATCH, low, high
_DENIED_AUTH = struct.Struct(">5I")       # xid, REPLY, MSG_DENIED, AUTH_ERROR, stat
_SUCCESS_NONE_TAIL = b"\0\0\0\1" + b"\0" * 16   # bytes 4..24 of a SUCCESS reply with AUTH_NONE verf


# --- calls ----------------------------------------------------------------------------------------

def encode_call_header(xid: int, prog: int, vers: int, proc: int, auth_bytes: bytes) -> bytes:
    """The call header up to the arguments; ``auth_bytes`` is ``ClientAuth.header_bytes()``."""
    return CALL_HEAD.pack(xid, MsgType.CALL, RPC_VERSION, prog, vers, proc) + auth_bytes


@dataclass(slots=True)
class CallHeader:
    """A decoded call header; the arguments start at ``args_offset`` of the record."""

    xid: int
    prog: int
    vers: int
    proc: int
    cred_flavor: int
    cred_body: bytes
    verf_flavor: int
    verf_body: bytes
    args_offset: int


class MalformedCall(ProtocolError):
    """A call the server cannot run. ``reply`` is what to answer, or None to close the connection."""

    def __init__(self, message: str, reply: bytes | None) -> None:
        super().__init__(message)
        self.reply = reply


def _read_auth(record: bytes, pos: int) -> tuple[int, bytes, int]:
    flavor, n = _U32x2.unpack_from(record, pos)          # struct.error when short
    if n > MAX_AUTH_BYTES:
        raise ValueError(f"auth body of {n} bytes exceeds MAX_AUTH_BYTES ({MAX_AUTH_BYTES})")
    pos += 8
    end = pos + n
    if end + (-n % 4) > len(record):
        raise ValueError(f"auth body of {n} bytes runs past the end of the record")
    return flavor, bytes(record[pos:end]), end + (-n % 4)


_NO_AUTH = b"\0" * 16                      # cred and verf both AUTH_NONE with empty bodies


def decode_call(record: bytes) -> CallHeader:
    """Decode a call header, or raise :class:`MalformedCall` saying how to answer it."""
    if record[24:40] == _NO_AUTH:
        xid, mtype, rpcvers, prog, vers, proc = CALL_HEAD.unpack_from(record, 0)
        if mtype == MsgType.CALL and rpcvers == RPC_VERSION:
            return CallHeader(xid, prog, vers, proc, 0, b"", 0, b"", 40)
    if len(record) < 24:
        if len(record) >= 12 and _U32.unpack_from(record, 4)[0] == MsgType.CALL \
                and _U32.unpack_from(record, 8)[0] != RPC_VERSION:
            xid = _U32.unpack_from(record, 0)[0]
            raise MalformedCall("wrong RPC version", encode_rpc_mismatch(xid))
        raise MalformedCall(f"record of {len(record)} bytes is too short for a call header", None)
    xid, mtype, rpcvers, prog, vers, proc = CALL_HEAD.unpack_from(record, 0)
    if mtype != MsgType.CALL:
        raise MalformedCall(f"message type {mtype} where a CALL was expected", None)
    if rpcvers != RPC_VERSION:
        raise MalformedCall(f"RPC version {rpcvers}, only {RPC_VERSION} is served",
                            encode_rpc_mismatch(xid))
    try:
        cred_flavor, cred_body, pos = _read_auth(record, 24)
    except (ValueError, struct.error) as exc:
        raise MalformedCall(f"bad credential: {exc}",
                            encode_auth_error(xid, AuthStat.AUTH_BADCRED)) from None
    try:
        verf_flavor, verf_body, pos = _read_auth(record, pos)
    except (ValueError, struct.error) as exc:
        raise MalformedCall(f"bad verifier: {exc}",
                            encode_auth_error(xid, AuthStat.AUTH_BADVERF)) from None
    return CallHeader(xid, prog, vers, proc, cred_flavor, cred_body, verf_flavor, verf_body, pos)


# --- replies --------------------------------------------------------------------------------------

def encode_success(xid: int, verf: tuple[int, bytes] | None = None) -> bytes:
    """MSG_ACCEPTED / SUCCESS header; the results follow it."""
    if verf is None or (verf[0] == 0 and not verf[1]):
        return _SUCCESS_NONE.pack(xid, MsgType.REPLY, ReplyStat.MSG_ACCEPTED, 0, 0, AcceptStat.SUCCESS)
    return encode_accepted(xid, AcceptStat.SUCCESS, verf)


def encode_accepted(xid: int, stat: int, verf: tuple[int, bytes] | None = None,
                    low: int = 0, high: int = 0) -> bytes:
    """A MSG_ACCEPTED reply header with ``stat`` (PROG_MISMATCH carries ``low``/``high``)."""
    vflavor, vbody = verf or (0, b"")
    head = _ACCEPTED_HEAD.pack(xid, MsgType.REPLY, ReplyStat.MSG_ACCEPTED, vflavor)
    head += _U32.pack(len(vbody)) + vbody + b"\0" * (-len(vbody) % 4) + _U32.pack(stat)
    if stat == AcceptStat.PROG_MISMATCH:
        head += _U32x2.pack(low, high)
    return head


def encode_rpc_mismatch(xid: int, low: int = RPC_VERSION, high: int = RPC_VERSION) -> bytes:
    return _DENIED_MISMATCH.pack(xid, MsgType.REPLY, ReplyStat.MSG_DENIED, RejectStat.RPC_MISMATCH,
                                 low, high)


def encode_auth_error(xid: int, stat: int) -> bytes:
    return _DENIED_AUTH.pack(xid, MsgType.REPLY, ReplyStat.MSG_DENIED, RejectStat.AUTH_ERROR, stat)


def reply_xid(record: bytes) -> int:
    if len(record) < 4:
        raise ProtocolError(f"reply record of {len(record)} bytes has no xid")
    return _U32.unpack_from(record, 0)[0]


def decode_reply(record: bytes,
                 check_verifier: Callable[[int, bytes], None] | None = None) -> int:
    """Check a reply's status; return the offset of the results, or raise the matching error.

    ``check_verifier(flavor, body)`` (a flavor's ``ClientAuth.check_verifier``) sees the verifier
    of every accepted reply and raises ``AuthError`` to reject it.
    """
    if check_verifier is None and record[4:24] == _SUCCESS_NONE_TAIL:
        return 24
    try:
        xid, mtype, stat = struct.unpack_from(">3I", record, 0)
        if mtype != MsgType.REPLY:
            raise ProtocolError(f"message type {mtype} where a REPLY was expected (xid {xid:#x})")
        if stat == ReplyStat.MSG_ACCEPTED:
            vflavor, vbody, pos = _read_auth(record, 12)
            astat, = _U32.unpack_from(record, pos)
            pos += 4
            if check_verifier is not None:
                check_verifier(vflavor, vbody)
            if astat == AcceptStat.SUCCESS:
                return pos
            if astat == AcceptStat.PROG_MISMATCH:
                low, high = _U32x2.unpack_from(record, pos)
                raise ProgMismatch(f"program version not served; the server has versions {low}..{high}",
                                   low, high)
            cls = ACCEPT_ERRORS.get(astat)
            if cls is None:
                raise ProtocolError(f"reply has unknown accept_stat {astat}")
            raise cls(_ACCEPT_TEXT[astat])
        if stat == ReplyStat.MSG_DENIED:
            rstat, = _U32.unpack_from(record, 12)
            if rstat == RejectStat.RPC_MISMATCH:
                low, high = _U32x2.unpack_from(record, 16)
                raise RpcMismatch(f"server speaks RPC versions {low}..{high} only", low, high)
            if rstat == RejectStat.AUTH_ERROR:
                raise AuthError(_U32.unpack_from(record, 16)[0])
            raise ProtocolError(f"reply has unknown reject_stat {rstat}")
        raise ProtocolError(f"reply has unknown reply_stat {stat}")
    except (struct.error, ValueError) as exc:
        if isinstance(exc, ProtocolError):
            raise
        raise ProtocolError(f"malformed reply header: {exc}") from None


_ACCEPT_TEXT = {
    AcceptStat.PROG_UNAVAIL: "the server does not serve this program",
    AcceptStat.PROC_UNAVAIL: "the server does not implement this procedure",
    AcceptStat.GARBAGE_ARGS: "the server could not decode the arguments",
    AcceptStat.SYSTEM_ERR: "the server failed while running the procedure (see its log)",
}
