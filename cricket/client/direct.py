"""Device-to-host copies received straight into the destination.

A ``CR_MEMCPY_DTOH`` reply (``cr_data_res``: status, then the opaque's length and bytes) normally
travels socket → the RPC client's receive buffer → the reassembled record → the application's
memory. For a large chunk that is two or three copies of the payload on the client. Here the thread
waiting for the reply becomes the connection's reader (the same role :class:`cricket.rpc.Client`
hands between threads), reads the record mark and the reply's fixed head with exact-sized reads,
and ``recv_into`` the destination itself: the kernel copies the bytes where the application wants
them and nothing else touches them.

It falls back to the RPC client's ordinary path (same results, more copies) whenever the fast path
does not apply: another thread is reading, the reply was already read by someone else, the reply is
an error, the client uses a verifier-checking auth flavor, or the RPC client lacks the reader state
this module relies on (checked once per client; see :func:`supported`).

Other threads' replies that arrive first are read whole and handed over to them, as the RPC client
does. A failure in the middle of a record fails the connection (the stream position is lost).
"""
from __future__ import annotations

import logging
import socket
import struct
from typing import Any

from cricket.protocol import MAX_INLINE, PROCEDURES

log = logging.getLogger(__name__)

# Copies go in chunks of this size, all sent before the first reply is awaited, so the server
# works on one chunk while the next travels. The protocol allows CRICKET_MAX_INLINE (4 MiB); 2 MiB
# chunks measured 4-5x faster host-to-device through the emu server (16 MiB copies: ~2100 against
# ~420 MB/s) and ~1.2x device-to-host; 1 MiB was close behind, 256 KiB much slower again.
COPY_CHUNK = min(2 << 20, MAX_INLINE)
DIRECT_MIN = 64 * 1024          # smaller replies: one recv into the RPC buffer is cheaper
_LAST = 0x80000000
_SUCCESS_NONE_TAIL = b"\0\0\0\1" + b"\0" * 16   # reply bytes 4..24: accepted, AUTH_NONE, SUCCESS
_DATA_HEAD = 4 + 24 + 8         # mark + reply head + cr_data_res status + opaque length

_REQUIRED = ("_lock", "_cond", "_reading", "_sleepers", "_replies", "_waiting", "_reader", "_sock",
             "_hand_over", "_result", "_lost", "_fail", "_timeout", "_error", "_check_verifier", "_rcvtimeo",
             "_set_rcvtimeo", "timeout", "_spin", "spin_until_readable")
_support: dict[int, bool] = {}


def supported(rpc: Any) -> bool:
    """True when ``rpc`` (a cricket.rpc.Client) has the reader state the fast path shares."""
    key = id(type(rpc))
    ok = _support.get(key)
    if ok is None:
        ok = all(hasattr(rpc, name) for name in _REQUIRED) and hasattr(rpc._reader, "in_record")
        if not ok:
            log.info("the RPC client lacks the reader state for direct receives; device-to-host "
                     "copies take the ordinary path")
        _support[key] = ok
    return ok and rpc._check_verifier is None


class _Reader:
    """Exact-sized reads from the client's socket (the caller holds the reader role)."""

    def __init__(self, rpc: Any) -> None:
        self.rpc = rpc
        self.sock = rpc._sock
        self.mid_record = False

    def into(self, view: memoryview) -> None:
        sock = self.sock
        got, want = 0, len(view)
        spin = self.rpc._spin
        while got < want:
            if got and spin:
                # The rest is on its way (the server is still writing): poll for it rather than
                # sleep in the read and be woken for each piece.
                self.rpc.spin_until_readable()
            try:
                n = sock.recv_into(view[got:] if got else view)
            except InterruptedError:
                continue
            except (BlockingIOError, socket.timeout) as exc:
                err = self.rpc._timeout(self.rpc.timeout)
                if self.mid_record or got:
                    raise self.rpc._fail(err) from exc    # the stream position is lost
                raise err from exc
            except OSError as exc:
                from cricket.rpc.errors import RpcConnectionError
                raise self.rpc._fail(RpcConnectionError(
                    f"reading from the RPC server at {self.rpc.address} failed: "
                    f"{exc.strerror or exc}")) from exc
            if n == 0:
                self.rpc._lost()
            got += n
            self.mid_record = True

    def exact(self, size: int) -> bytearray:
        buf = bytearray(size)
        if size:
            self.into(memoryview(buf))
        return buf

    def rest_of_record(self, mark: int, have: bytes) -> bytes:
        """The record whose first fragment's mark is ``mark`` and whose first bytes are ``have``."""
        from cricket.rpc.errors import RecordTooLarge
        limit = self.rpc._reader.max_record_size
        parts = [bytes(have), bytes(self.exact((mark & ~_LAST) - len(have)))]
        size = mark & ~_LAST
        while not mark & _LAST:
            mark = int.from_bytes(self.exact(4), "big")
            size += mark & ~_LAST
            if size > limit:
                raise self.rpc._fail(RecordTooLarge(size, limit))
            parts.append(bytes(self.exact(mark & ~_LAST)))
        self.mid_record = False
        return b"".join(parts)


def receive_data_into(call: Any, dst: memoryview) -> memoryview | None:
    """Collect the reply to ``call`` (a PendingCall of ``CR_MEMCPY_DTOH`` for ``len(dst)`` bytes).

    Returns None when the data went straight into ``dst``; otherwise the reply's result bytes
    (encoded ``cr_data_res``) for the caller to decode as usual: an error status, or a reply that
    another thread had already read.
    """
    rpc = call.client
    xid = call.xid
    n = len(dst)
    if n < DIRECT_MIN or not supported(rpc):
        return call.result()
    with rpc._lock:
        if rpc._reading or xid in rpc._replies or rpc._reader.in_record or rpc._error is not None:
            lead = False
        else:
            rpc._reading = lead = True
    if not lead:
        return call.result()
    reader = _Reader(rpc)
    pad = -n % 4
    if rpc._spin:
        rpc.spin_until_readable()
    try:
        if rpc._rcvtimeo != rpc.timeout:
            rpc._set_rcvtimeo(rpc.timeout)
        while True:
            mark = int.from_bytes(reader.exact(4), "big")
            length = mark & ~_LAST
            head = reader.exact(min(length, _DATA_HEAD - 4))   # never past this record
            rxid = int.from_bytes(head[:4], "big") if len(head) >= 4 else -1
            if (rxid == xid and mark & _LAST and length == _DATA_HEAD - 4 + n + pad
                    and head[4:24] == _SUCCESS_NONE_TAIL
                    and head[24:32] == b"\0\0\0\0" + n.to_bytes(4, "big")):
                reader.into(dst)
                if pad:
                    reader.exact(pad)
                reader.mid_record = False
                return None
            record = reader.rest_of_record(mark, head)
            if rxid == xid:
                return rpc._result(record)
            rpc._hand_over([record], xid)
    finally:
        with rpc._lock:
            rpc._reading = False
            rpc._waiting.discard(xid)
            if rpc._sleepers:
                rpc._cond.notify_all()



# --- host-to-device: the application's bytes go to the socket as they are ----------------------

PROC_DTOH = PROCEDURES["CR_MEMCPY_DTOH"]
PROC_HTOD = PROCEDURES["CR_MEMCPY_HTOD"]
PROC_HTOD_ASYNC = PROCEDURES["CR_MEMCPY_HTOD_ASYNC"]     # batched, no reply
_HTOD_HEAD = struct.Struct(">QQI")       # cr_htod_args: dst, stream, the opaque's length
dtoh_args = struct.Struct(">QQQ").pack   # cr_dtoh_args (src, size, stream), encoded
STATUS_OK = b"\0\0\0\0"                # cr_status_res of a call that succeeded
_PAD = (b"", b"\0\0\0", b"\0\0", b"\0")


def htod_buffers(dst: int, stream: int, data: memoryview) -> list:
    """``cr_htod_args`` as buffers for a gathering write: a 20-byte head, ``data`` itself (not
    copied) and the XDR padding."""
    n = len(data)
    pad = _PAD[n % 4]
    head = _HTOD_HEAD.pack(dst, stream, n)
    return [head, data, pad] if pad else [head, data]
