# Polling a socket for a reply (cext/socket_poll.pyx; pure-Python twin cricket/rpc/socket_poll.py).

cpdef bint wait_readable(object sock, bytearray peek, double seconds, bint yield_cpu) except -1
cdef int poll_fd(int fd, double seconds, bint yield_cpu) noexcept nogil
