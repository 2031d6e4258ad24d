"""The launch queue: every kernel launch of both API faces becomes one whole batched
``CR_LAUNCH_ASYNC`` call record (RPC header, launch arguments, parameters packed from the
application's ``void *args[]``), checked against the launching thread's device and queued on the
RPC client with no reply and no round trip.

Pure-Python twin of ``cricket._cext.launch_queue`` (``cext/launch_queue.pyx``, interface in
``cricket/_cext/launch_queue.pxd``); ``cricket._select.load`` picks one, ``CRICKET_PUREPYTHON=1`` this one.
"""
from __future__ import annotations

from typing import Any, Callable

from cricket import _select
from cricket.protocol import PROCEDURES, PROGRAM, VERSION

hostmem = _select.load("cricket._cext.hostmem", "cricket.client.hostmem")

CR_LAUNCH_ASYNC = PROCEDURES["CR_LAUNCH_ASYNC"]


class LaunchQueue:
    """Queues launches on the RPC client it is given. ``limits_of(device)`` gives a device's eight
    launch limits (max threads per block, max block x/y/z, max grid x/y/z, max dynamic shared
    bytes), asked once per device; ``mapped`` (``MappedMemory``) sends the host's writes to
    mapped memory ahead of a launch; ``stats.launches`` counts the launches queued."""

    def __init__(self, limits_of: Callable[[int], tuple], mapped: Any, stats: Any) -> None:
        self.limits_of = limits_of
        self.mapped = mapped
        self.stats = stats
        self._limits: dict[int, tuple] = {}
        self._rpc: Any = None
        self._head = b""            # the CR_LAUNCH_ASYNC call head of ``_rpc``

    def limits(self, device: int) -> tuple:
        """The eight launch limits of ``device``, as ``hostmem.launch_call`` checks them."""
        flat = self._limits.get(device)
        if flat is None:
            flat = self._limits[device] = tuple(self.limits_of(device))
        return flat

    def forget(self) -> None:
        """A new session (a forked child's): limits and call head are asked again."""
        self._limits.clear()
        self._rpc = None
        self._head = b""

    def queue(self, rpc: Any, device: int, function: int, gxy: int, gz: int, bxy: int, bz: int,
              shared: int, stream: int, args: int, layout: tuple, param_size: int) -> bool:
        """Queue a launch of ``function`` (the server's handle) on the server stream ``stream``;
        the grid and block come as ``x | y << 32`` and ``z``. False (nothing queued) when the
        configuration breaks the limits of ``device``."""
        if rpc is not self._rpc:
            self._head = rpc.call_head(PROGRAM, VERSION, CR_LAUNCH_ASYNC)
            self._rpc = rpc
        record = hostmem.launch_call(self._head, rpc.next_xid(), function, gxy, gz, bxy, bz, shared,
                                     stream, args, layout, param_size, self.limits(device))
        if record is None:
            return False
        if self.mapped.ranges:          # the host's writes to mapped memory go first
            self.mapped.before_launch(stream)
        rpc.queue_batched(record)
        self.stats.launches += 1
        return True
