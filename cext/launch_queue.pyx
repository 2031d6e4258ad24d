# cython: language_level=3
"""The launch queue in Cython: every kernel launch of both API faces becomes one whole batched
``CR_LAUNCH_ASYNC`` call record, checked against the launching thread's device and queued on the
RPC client with no reply. Interface: ``cricket/_cext/launch_queue.pxd``; pure-Python twin (same API, same
records): ``cricket/client/launch_queue.py``, which documents the class.
"""
from cricket._cext import hostmem
from cricket.protocol import PROCEDURES, PROGRAM, VERSION

cdef object _launch_call = hostmem.launch_call
cdef object CR_LAUNCH_ASYNC = PROCEDURES["CR_LAUNCH_ASYNC"]


cdef class LaunchQueue:
    def __init__(self, limits_of, mapped, stats):
        self.limits_of = limits_of
        self.mapped = mapped
        self.stats = stats
        self._limits = {}
        self._rpc = None
        self._head = b""

    cpdef tuple limits(self, long device):
        """The eight launch limits of ``device``, as ``hostmem.launch_call`` checks them."""
        flat = self._limits.get(device)
        if flat is None:
            flat = self._limits[device] = tuple(self.limits_of(device))
        return <tuple>flat

    cpdef forget(self):
        """A new session (a forked child's): limits and call head are asked again."""
        self._limits.clear()
        self._rpc = None
        self._head = b""

    cpdef bint queue(self, object rpc, long device, unsigned long long function,
                     unsigned long long gxy, unsigned long long gz, unsigned long long bxy,
                     unsigned long long bz, unsigned long long shared, unsigned long long stream,
                     size_t args, tuple layout, Py_ssize_t param_size) except -1:
        """Queue a launch; False (nothing queued) when the configuration breaks the limits."""
        if rpc is not self._rpc:
            self._head = rpc.call_head(PROGRAM, VERSION, CR_LAUNCH_ASYNC)
            self._rpc = rpc
        record = _launch_call(self._head, rpc.next_xid(), function, gxy, gz, bxy, bz, shared,
                              stream, args, layout, param_size, self.limits(device))
        if record is None:
            return False
        if self.mapped.ranges:
            self.mapped.before_launch(stream)
        rpc.queue_batched(record)
        self.stats.launches += 1
        return True
