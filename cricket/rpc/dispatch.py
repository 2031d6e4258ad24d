"""Pure-Python twin of ``cricket._cext.dispatch`` (``cext/dispatch.pyx``): one call record, from
the bytes the event loop read to the reply handed to the transport.

The functions are methods of the server's connection (``cricket.rpc.server._Connection`` takes
them as ``buffer_updated``, ``data_received``, ``handle`` and ``reply``): the common call runs in
them alone, and the rare paths (a payload sink, a record read in place, a record over the limit,
queued records, a header that is not AUTH_NONE, an unknown program or procedure, garbage
arguments, a handler that raised or returned an awaitable, a large reply) are the connection's own
methods, shared by both implementations. :class:`Entry` is one procedure of a served version,
resolved when the skeleton is added. See ``docs/rpc-dispatch.md``.
"""
from __future__ import annotations

import struct
from collections.abc import Callable
from types import CoroutineType
from typing import Any

from cricket.xdr import Packer, Unpacker, XdrError

from .constants import RPC_VERSION
from .context import NO_REPLY, _current

SINK_HEAD = 4 + 40         # record mark, call header with AUTH_NONE: what a sink's check reads first
SMALL_REPLY = 16384        # replies up to this size are joined into one write
DECODE_ERRORS = (XdrError, ValueError, IndexError, TypeError, OverflowError, EOFError)

_CALL_HEAD = struct.Struct(">6I")
_NULL_REPLY = struct.Struct(">7I")        # record mark + a SUCCESS reply with no results
_NULL_MARK = 0x80000000 | 24
_NO_AUTH = b"\0" * 16                     # AUTH_NONE credential and verifier

_ANSWERED = object()                      # _none_call answered the call itself
_PLAIN_RESULTS: set[type] = {type(None), int, float, bool, str, bytes, list, tuple, dict}


def _awaitable_type(rtype: type) -> bool:
    """Whether results of this type must be awaited; remembers the types that need not."""
    if rtype is CoroutineType or hasattr(rtype, "__await__"):
        return True
    if len(_PLAIN_RESULTS) < 4096:
        _PLAIN_RESULTS.add(rtype)
    return False


class Entry:
    """One procedure of one served version, resolved at registration."""

    __slots__ = ("proc", "method", "number", "name", "decode_args", "encode_result")

    def __init__(self, proc: Any, method: Callable[..., Any] | None) -> None:
        self.proc, self.method, self.number, self.name = proc, method, proc.number, proc.name
        self.decode_args, self.encode_result = proc.decode_args, proc.encode_result


class ConnectionState:
    """What a record's common path reads of a connection: the connection's own fields (set by
    the connection's code too), and the server's tables, taken once."""

    def __init__(self, server: Any) -> None:
        self.server, self.poll, self.max_fragment = server, server.poll, server.max_fragment
        self.programs, self.sinks, self.builtin_null = (server._programs, server._sinks,
                                                        server._builtin_null)


def buffer_updated(conn: Any, nbytes: int) -> None:
    """``nbytes`` arrived in the buffer the connection handed out last."""
    if conn.poll:
        conn.server._keep_polling()
    if conn._receiving is not None or conn._direct:
        conn._filled_in_place(nbytes)
        return
    data = conn._rview[:nbytes]
    if conn.sinks and nbytes >= SINK_HEAD and not conn.reader.in_record and conn._offer_sink(data):
        return
    data_received(conn, data)


def data_received(conn: Any, data: bytes | memoryview) -> None:
    """Reassemble records from ``data`` and answer those complete."""
    records = conn._feed(data)
    if records:
        if len(records) == 1 and not (conn.busy or conn.held or conn.queue or conn.refused):
            handle(conn, records[0])
        else:
            conn._deliver(records)


def handle(conn: Any, record: bytes) -> None:
    """Answer one call record (or close the connection when its header is unreadable)."""
    call = _none_call(conn, record) or conn._handle_decoded(record)
    if call is None or call is _ANSWERED:
        return
    xid, prog, vers, proc, cred_flavor, cred_body, authenticator, credentials, offset = call
    table = conn.programs.get((prog, vers))
    entry = None if table is None else table.get(proc)
    if entry is None or entry.method is None:
        conn._no_procedure(xid, prog, vers, proc)
        return
    try:
        args = entry.decode_args(Unpacker(record, offset))
    except DECODE_ERRORS as exc:
        conn._garbage_args(xid, entry, exc)
        return
    token = _current.set((conn, xid, prog, vers, proc, cred_flavor, cred_body, credentials))
    try:
        result = entry.method(*args)
        rtype = type(result)
        if rtype not in _PLAIN_RESULTS and _awaitable_type(rtype):
            conn._await_result(xid, entry, authenticator, credentials, result)
            return
    except Exception as exc:
        conn._handler_failed(xid, entry, exc)
        return
    finally:
        _current.reset(token)
    reply(conn, xid, entry, authenticator, credentials, result)


def _none_call(conn: Any, record: bytes) -> tuple | object | None:
    """What :func:`handle` dispatches on for a call with AUTH_NONE, as the connection's
    ``_handle_decoded`` gives it for the others, or ``_ANSWERED`` (a NULL the runtime answers);
    None for any other header."""
    if conn._none_auth is None or record[24:40] != _NO_AUTH:
        return None
    xid, mtype, rpcvers, prog, vers, proc = _CALL_HEAD.unpack_from(record, 0)
    if mtype != 0 or rpcvers != RPC_VERSION:
        return None
    if proc == 0 and (prog, vers) in conn.builtin_null:
        conn._write_small(_NULL_REPLY.pack(_NULL_MARK, xid, 1, 0, 0, 0, 0))
        return _ANSWERED
    return xid, prog, vers, proc, 0, b"", conn._none_auth, None, 40


def reply(conn: Any, xid: int, entry: Entry, authenticator: Any, credentials: Any,
          result: Any) -> None:
    """Encode ``result`` behind its reply header and record mark and write it (or collect it)."""
    if result is NO_REPLY or conn.closed:
        return
    # The reply is packed after its header and a placeholder for the record mark, so that a
    # small one leaves as one bytes object made once (Packer.get_record).
    packer = Packer()
    packer.pack_raw(_NULL_REPLY.pack(0, xid, 1, 0, 0, 0, 0) if authenticator is conn._none_auth
                    else conn._reply_head(xid, authenticator, credentials))
    try:
        entry.encode_result(packer, result)
    except Exception:
        conn._encode_failed(xid, entry)
        return
    size = len(packer) - 4
    if size <= SMALL_REPLY and size <= conn.max_fragment:
        conn._write_small(packer.get_record())
    else:
        conn._write_large(packer)
