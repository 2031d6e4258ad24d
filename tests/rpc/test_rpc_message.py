"""Call and reply headers and AUTH_SYS bodies against the byte layout of RFC 5531 (the words of a
libtirpc ADD(40, 2) call with AUTH_SYS, as recorded in oncrpc.md §2.1)."""
from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cricket.rpc import (AcceptStat, AuthError, AuthStat, AuthSys, AuthSysParms, GarbageArgs,
                         ProcUnavail, ProgMismatch, ProgUnavail, ProtocolError, RpcMismatch,
                         SystemErr)
from cricket.rpc import message


def words(*ws: int) -> bytes:
    return struct.pack(f">{len(ws)}I", *ws)


LIBTIRPC_ADD_CALL = (words(0x1234, 0, 2, 0x20000099, 1, 2)
                     + words(1, 24, 0x5F000000, 2) + b"vm\0\0" + words(0, 0, 0)
                     + words(0, 0)
                     + words(0x28, 0x2))
LIBTIRPC_ADD_REPLY = words(0x1234, 1, 0, 0, 0, 0, 0x2A)


def test_call_header_matches_libtirpc_bytes():
    auth = AuthSys(uid=0, gid=0, gids=(), machinename="vm", stamp=0x5F000000)
    head = message.encode_call_header(0x1234, 0x20000099, 1, 2, auth.header_bytes())
    assert head + words(0x28, 0x2) == LIBTIRPC_ADD_CALL


def test_call_header_decodes_to_its_fields():
    call = message.decode_call(LIBTIRPC_ADD_CALL)
    assert (call.xid, call.prog, call.vers, call.proc) == (0x1234, 0x20000099, 1, 2)
    assert call.cred_flavor == 1 and call.verf_flavor == 0 and call.verf_body == b""
    assert AuthSysParms.decode(call.cred_body) == AuthSysParms(0x5F000000, "vm", 0, 0, ())
    assert LIBTIRPC_ADD_CALL[call.args_offset:] == words(0x28, 0x2)


def test_success_reply_matches_libtirpc_bytes():
    assert message.encode_success(0x1234) + words(0x2A) == LIBTIRPC_ADD_REPLY
    assert message.decode_reply(LIBTIRPC_ADD_REPLY) == 24


def test_reply_with_a_verifier_body_finds_the_results():
    rec = message.encode_success(7, (2, b"tok")) + words(99)
    off = message.decode_reply(rec)
    assert rec[off:] == words(99)


@pytest.mark.parametrize("stat,exc", [(AcceptStat.PROG_UNAVAIL, ProgUnavail),
                                      (AcceptStat.PROC_UNAVAIL, ProcUnavail),
                                      (AcceptStat.GARBAGE_ARGS, GarbageArgs),
                                      (AcceptStat.SYSTEM_ERR, SystemErr)])
def test_each_accept_stat_raises_its_error(stat, exc):
    rec = message.encode_accepted(1, stat)
    assert rec == words(1, 1, 0, 0, 0, stat)
    with pytest.raises(exc):
        message.decode_reply(rec)


def test_prog_mismatch_carries_low_and_high():
    rec = message.encode_accepted(1, AcceptStat.PROG_MISMATCH, low=2, high=5)
    assert rec == words(1, 1, 0, 0, 0, 2, 2, 5)
    with pytest.raises(ProgMismatch) as err:
        message.decode_reply(rec)
    assert (err.value.low, err.value.high) == (2, 5)


def test_rejected_replies():
    rec = message.encode_rpc_mismatch(3)
    assert rec == words(3, 1, 1, 0, 2, 2)
    with pytest.raises(RpcMismatch) as err:
        message.decode_reply(rec)
    assert (err.value.low, err.value.high) == (2, 2)
    for stat in AuthStat:
        if stat == AuthStat.AUTH_OK:
            continue
        rec = message.encode_auth_error(3, stat)
        assert rec == words(3, 1, 1, 1, stat)
        with pytest.raises(AuthError) as aerr:
            message.decode_reply(rec)
        assert aerr.value.stat == stat and stat.name in str(aerr.value)


def test_reply_garbage_is_a_protocol_error():
    for rec in (words(1, 0, 0), words(1, 1, 7), words(1, 1, 0, 0, 1000), words(1, 1, 0, 0, 0, 9)):
        with pytest.raises(ProtocolError):
            message.decode_reply(rec)


def _call(*rest: bytes, rpcvers: int = 2) -> bytes:
    return words(9, 0, rpcvers, 0x20000099, 1, 1) + b"".join(rest)


def test_short_or_non_call_record_means_close():
    for rec in (b"", words(9, 0), words(9, 0, 2, 1), words(9, 1, 2, 1, 1, 1, 0, 0, 0, 0)):
        with pytest.raises(message.MalformedCall) as err:
            message.decode_call(rec)
        assert err.value.reply is None


def test_wrong_rpc_version_gets_rpc_mismatch():
    for rec in (_call(rpcvers=3), words(9, 0, 1)):
        with pytest.raises(message.MalformedCall) as err:
            message.decode_call(rec)
        assert err.value.reply == words(9, 1, 1, 0, 2, 2)


@pytest.mark.parametrize("rest,stat", [
    ((words(1, 401) + b"\0" * 404 + words(0, 0)), AuthStat.AUTH_BADCRED),   # over MAX_AUTH_BYTES
    ((words(1, 40) + b"\0" * 8), AuthStat.AUTH_BADCRED),                   # runs past the end
    ((words(0)), AuthStat.AUTH_BADCRED),                                   # no length
    ((words(0, 0, 0, 500)), AuthStat.AUTH_BADVERF),
    ((words(0, 0, 0)), AuthStat.AUTH_BADVERF),
])
def test_bad_credentials_and_verifiers_are_auth_errors(rest, stat):
    with pytest.raises(message.MalformedCall) as err:
        message.decode_call(_call(rest))
    assert err.value.reply == words(9, 1, 1, 1, stat)


def test_auth_sys_limits():
    with pytest.raises(ValueError):
        AuthSysParms(0, "x" * 256, 0, 0).encode()
    with pytest.raises(ValueError):
        AuthSysParms(0, "x", 0, 0, tuple(range(17))).encode()
    body = AuthSysParms(1, "host", 2, 3, (4,)).encode()
    for bad in (body + b"\0\0\0\0", body[:-4],
                words(1, 256) + b"x" * 256 + words(0, 0, 0),
                words(1, 0, 0, 0, 17) + b"\0" * 68):
        with pytest.raises(ValueError):
            AuthSysParms.decode(bad)


@given(stamp=st.integers(0, 2**32 - 1), name=st.text(max_size=60),
       uid=st.integers(0, 2**32 - 1), gid=st.integers(0, 2**32 - 1),
       gids=st.lists(st.integers(0, 2**32 - 1), max_size=16))
def test_auth_sys_round_trip(stamp, name, uid, gid, gids):
    parms = AuthSysParms(stamp, name[:60], uid, gid, tuple(gids))
    if len(parms.machinename.encode()) > 255:
        return
    assert AuthSysParms.decode(parms.encode()) == parms
