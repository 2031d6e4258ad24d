# cython: language_level=3
"""Polling a socket for a reply before sleeping in the read, in C: a plain socket is peeked with
``recv(MSG_PEEK | MSG_DONTWAIT)`` in a loop that holds no GIL, so other threads run meanwhile and
each poll costs a system call, not a raised ``BlockingIOError``. Other socket-like objects (TLS)
are polled through their ``recv_into`` as the twin does. Interface:
``cricket/_cext/socket_poll.pxd``; pure-Python twin (same API, documented there):
``cricket/rpc/socket_poll.py``.
"""
import socket

from libc.errno cimport EAGAIN, EINTR, errno
from posix.time cimport CLOCK_MONOTONIC, clock_gettime, timespec

from cricket.rpc import socket_poll as _twin

cdef extern from "<sys/socket.h>" nogil:
    ssize_t recv(int fd, void *buf, size_t n, int flags)
    enum:
        MSG_PEEK
        MSG_DONTWAIT

cdef extern from "<sched.h>" nogil:
    int sched_yield()

cdef object _socket_type = socket.socket
cdef object _twin_wait = _twin.wait_readable


cdef inline double _now() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + ts.tv_nsec * 1e-9


cdef int poll_fd(int fd, double seconds, bint yield_cpu) noexcept nogil:
    """Peek ``fd`` until a byte or the end of the stream is there (1), an error other than
    ``EAGAIN``/``EINTR`` (-1), or ``seconds`` passed (0)."""
    cdef char c
    cdef double end = _now() + seconds
    while True:
        if recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) >= 0:
            return 1
        if errno != EAGAIN and errno != EINTR:      # EWOULDBLOCK is EAGAIN on Linux
            return -1
        if _now() > end:
            return 0
        if yield_cpu:
            sched_yield()


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
