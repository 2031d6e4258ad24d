# Polling a socket for a reply (cext/socket_poll.pyx; pure-Python twin cricket/rpc/socket_poll.py).

cpdef bint wait_readable(object sock, bytearray peek, double seconds, bint yield_cpu) except -1
cpdef bint note_yield(double before, double after)
cpdef void pause_polling(double until)
cpdef double polling_paused_until()
cdef int poll_fd(int fd, double seconds, bint yield_cpu) noexcept nogil
