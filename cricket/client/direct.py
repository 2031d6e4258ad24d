"""Copies whose bytes go between the socket and the application's memory without a copy of ours.

Device to host: a ``CR_MEMCPY_DTOH`` reply (``cr_data_res``: status, then the opaque's length and
bytes) normally travels socket → the RPC client's receive buffer → the reassembled record → the
application's memory. For a large chunk the reply is received into a reply sink instead
(:meth:`cricket.rpc.Client.result_into`): the kernel copies the bytes where the application wants
them and nothing else touches them. Whatever reply does not have the expected shape (an error
status, one another thread already read) comes back as result bytes for the ordinary decoding.

Host to device: ``cr_htod_args`` goes out as its fixed head, the application's bytes themselves and
the XDR padding, in one gathering write. Both layouts come from ``cricket.x`` through rpcgen
(``pack_T_fixed``), never from offsets of our own.
"""
from __future__ import annotations

from typing import Any

from cricket.protocol import MAX_INLINE, PROCEDURES
from cricket.protocol import gen as P
from cricket.rpc.sink import ReplySink

# Copies go in chunks of this size, all sent before the first reply is awaited, so the server
# works on one chunk while the next travels. The protocol allows CRICKET_MAX_INLINE (4 MiB); 2 MiB
# chunks measured 4-5x faster host-to-device through the emu server (16 MiB copies: ~2100 against
# ~420 MB/s) and ~1.2x device-to-host; 1 MiB was close behind, 256 KiB much slower again.
COPY_CHUNK = min(2 << 20, MAX_INLINE)
DIRECT_MIN = 64 * 1024          # smaller replies: one recv into the RPC buffer is cheaper

PROC_DTOH = PROCEDURES["CR_MEMCPY_DTOH"]
PROC_HTOD = PROCEDURES["CR_MEMCPY_HTOD"]
PROC_HTOD_ASYNC = PROCEDURES["CR_MEMCPY_HTOD_ASYNC"]     # batched, no reply
STATUS_OK = P.pack_cr_status_res(P.cr_status_res(status=0))   # the result of a call that succeeded
_PAD = (b"", b"\0\0\0", b"\0\0", b"\0")


def receive_data_into(call: Any, dst: memoryview) -> memoryview | None:
    """Collect the reply to ``call`` (a PendingCall of ``CR_MEMCPY_DTOH`` for ``len(dst)`` bytes).

    Returns None when the data went straight into ``dst``; otherwise the reply's result bytes
    (encoded ``cr_data_res``) for the caller to decode as usual: an error status, or a reply that
    another thread had already read.
    """
    n = len(dst)
    if n < DIRECT_MIN:
        return call.result()
    return call.result_into(ReplySink(P.pack_cr_data_res_data_fixed(data_len=n), dst))


def take_data(reply: memoryview, view: memoryview) -> bool:
    """Put the data of ``reply`` (encoded ``cr_data_res``) into ``view`` when it succeeded with
    exactly ``len(view)`` bytes; False, with ``view`` untouched, for any other reply."""
    n = len(view)
    head = P.cr_data_res_data_FIXED_SIZE
    if len(reply) >= head + n and reply[:head] == P.pack_cr_data_res_data_fixed(data_len=n):
        view[:] = reply[head:head + n]
        return True
    return False


def dtoh_args(src: int, size: int, stream: int) -> bytes:
    """``cr_dtoh_args``, encoded."""
    return P.pack_cr_dtoh_args_fixed(src=src, size=size, stream=stream)


def htod_buffers(dst: int, stream: int, data: memoryview) -> list:
    """``cr_htod_args`` as buffers for a gathering write: its fixed head, ``data`` itself (not
    copied) and the XDR padding."""
    n = len(data)
    pad = _PAD[n % 4]
    head = P.pack_cr_htod_args_fixed(dst=dst, stream=stream, data_len=n)
    return [head, data, pad] if pad else [head, data]
