"""cudaMemcpy's entry: a synchronous copy between pinned memory the server maps and the device goes
from the shim's arguments straight to its one RPC call, in the plain case; every other case runs
the implementation (``runtime_calls.memcpy``) behind the guard, as before.

Pure-Python twin of ``cricket._cext.pinned_copy`` (``cext/pinned_copy.pyx``, the same checks and
calls in C); ``runtime_calls`` registers the ``PinnedMemcpy`` of the module ``cricket._select.load``
picks. The plain case, as ``runtime_calls._copy``, ``SingleServer``, ``Copies`` and
``shm_pinned._copy`` would take it (``docs/client-copy-path.md``):

- the guard's fast path holds (a device is visible, no thread chose another device), one server
  (``SingleServer``) and its session open, no mapped memory;
- ``kind`` is cudaMemcpyHostToDevice or cudaMemcpyDeviceToHost, ``0 < count <= shm_pinned.PART``;
- nothing for the drain to do first (no deferred device-to-host copy, none being completed, no
  device printf output to fetch), no mapped memory the device may have written;
- the host range lies in one pinned allocation the server maps (``PinnedTable``).

The copy is then ``CR_MEMCPY_HTOD_PINNED`` / ``CR_MEMCPY_DTOH_PINNED`` through ``rpc.Client.call``
(which sends any batched launches first, so the copy is ordered after them), the bytes counted in
the stats as ``Copies`` counts them, a failure reported by the session's check and translated by
the guard (``runtime_guard.failed``: the code, kept as the thread's last error).
"""
from __future__ import annotations

from typing import Any

from cricket.client import shm_pinned
from cricket.client.runtime_guard import RuntimeCall, failed
from cricket.client.single_server import SingleServer
from cricket.client.windows import D2H, H2D
from cricket.protocol import PROGRAM, VERSION
from cricket.protocol import gen as P


class PinnedMemcpy(RuntimeCall):
    """The guarded ``cudaMemcpy(dst, src, count, kind)`` with the pinned fast path in front."""

    def __call__(self, *args: int) -> int:
        if len(args) != 4:
            return RuntimeCall.__call__(self, *args)
        dst, src, count, kind = args
        rt = self.runtime
        if (rt.no_device or rt.multi_device or not 0 < count <= shm_pinned.PART
                or (kind != H2D and kind != D2H)):
            return RuntimeCall.__call__(self, *args)
        conn = rt._conn
        if conn is None:
            return RuntimeCall.__call__(self, *args)
        table = conn.pinned_table
        if not table.by_address:
            return RuntimeCall.__call__(self, *args)
        host, device = (src, dst) if kind == H2D else (dst, src)
        m = table.find(host, count)
        if m is None:
            return RuntimeCall.__call__(self, *args)
        mapped = rt.mapped_memory
        if mapped.ranges or mapped.device_dirty or type(rt.route) is not SingleServer:
            return RuntimeCall.__call__(self, *args)
        copies = rt.copies
        if copies.pending or copies.draining or conn.output.armed:
            return RuntimeCall.__call__(self, *args)
        try:
            copy(rt, conn, kind, device, host - m.address, m.region, count)
        except Exception as exc:
            return failed(self, exc)
        return 0


def copy(rt: Any, conn: Any, kind: int, device: int, offset: int, region: int, count: int) -> None:
    """The plain case's copy: one call, its bytes counted, its failure raised."""
    if kind == H2D:
        rt.stats.bytes_htod += count
        proc, name = shm_pinned.PROC_HTOD, "cuMemcpyHtoD"
    else:
        proc, name = shm_pinned.PROC_DTOH, "cuMemcpyDtoH"
    reply = conn._rpc.call(PROGRAM, VERSION, proc, [P.pack_cr_pinned_copy_args_fixed(
        region=region, device=device, stream=0, offset=offset, size=count)])
    if reply != shm_pinned.STATUS_OK:
        conn._check(P.unpack_cr_status_res(reply), name)
    if kind == D2H:
        rt.stats.bytes_dtoh += count
    if rt.mapped_memory.device_dirty:       # another thread's launch since the check
        rt.synchronized()
