# cython: language_level=3
"""Polling a socket for a reply before sleeping in the read, in C: a plain socket is peeked with
``recv(MSG_PEEK | MSG_DONTWAIT)`` in a loop that holds no GIL, so other threads run meanwhile and
each poll costs a system call, not a raised ``BlockingIOError``. A yield between polls that comes
back late pauses polling process-wide (the rule and its figures: ``cricket.rpc.contention``).
Other socket-like objects (TLS) are polled through their ``recv_into`` as the twin does.
Interface: ``cricket/_cext/socket_poll.pxd``; pure-Python twin (same API, documented there):
``cricket/rpc/socket_poll.py``.
"""
import socket

from libc.errno cimport EAGAIN, EINTR, errno
from posix.time cimport CLOCK_MONOTONIC, clock_gettime, timespec

from cricket.rpc import contention as _contention, socket_poll as _twin

cdef extern from "<sys/socket.h>" nogil:
    ssize_t recv(int fd, void *buf, size_t n, int flags)
    enum:
        MSG_PEEK
        MSG_DONTWAIT

cdef extern from "<sched.h>" nogil:
    int sched_yield()

cdef object _socket_type = socket.socket
cdef object _twin_wait = _twin.wait_readable
cdef double _contended_yield = _contention.CONTENDED_YIELD
cdef double _contended_pause = _contention.CONTENDED_PAUSE
cdef double _paused_until = 0.0     # CLOCK_MONOTONIC seconds: no polling before this


cdef inline double _now() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + ts.tv_nsec * 1e-9


cdef bint _note_yield(double before, double after) noexcept nogil:
    """``contention.paused_until`` in C: True when the yield came back late (polling paused)."""
    global _paused_until
    if after - before <= _contended_yield:
        return False
    if after + _contended_pause > _paused_until:
        _paused_until = after + _contended_pause
    return True


cdef int poll_fd(int fd, double seconds, bint yield_cpu) noexcept nogil:
    """Peek ``fd`` until a byte or the end of the stream is there (1), an error other than
    ``EAGAIN``/``EINTR`` (-1), or ``seconds`` passed, a yield came back late, or polling is
    paused (0)."""
    cdef char c
    cdef double before = _now()
    cdef double end = before + seconds
    if yield_cpu and before < _paused_until:
        return 0
    while True:
        if recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) >= 0:
            return 1
        if errno != EAGAIN and errno != EINTR:      # EWOULDBLOCK is EAGAIN on Linux
            return -1
        before = _now()
        if before > end:
            return 0
        if yield_cpu:
            sched_yield()
            if _note_yield(before, _now()):
                return 0


cpdef bint note_yield(double before, double after):
    """See the twin, ``cricket.rpc.socket_poll.note_yield``."""
    return _note_yield(before, after)


cpdef void pause_polling(double until):
    """See the twin, ``cricket.rpc.socket_poll.pause_polling``."""
    global _paused_until
    _paused_until = until


cpdef double polling_paused_until():
    """See the twin, ``cricket.rpc.socket_poll.polling_paused_until``."""
    return _paused_until


cpdef bint wait_readable(object sock, bytearray peek, double seconds, bint yield_cpu) except -1:
    """See the twin, ``cricket.rpc.socket_poll.wait_readable``."""
    cdef int fd, found
    if type(sock) is not _socket_type:
        return _twin_wait(sock, peek, seconds, yield_cpu)
    fd = sock.fileno()
    if fd < 0:
        return True             # closed: the read reports it
    with nogil:
        found = poll_fd(fd, seconds, yield_cpu)
    return found != 0
