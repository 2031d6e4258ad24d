# The copies between host and device (cext/copies.pyx; pure-Python twin cricket/client/copies.py).

cdef class Copies:
    cdef public object stats             # Stats: bytes_htod, bytes_dtoh
    cdef public list pending             # deferred copies: (number, started, host address, bytes)
    cdef public Py_ssize_t deferred_total    # copies ever deferred (numbers them)
    cdef public dict event_marks         # event -> copies deferred before its last record
    cdef public bint draining            # a thread is completing deferred copies
    cdef public object _lock             # guards pending
    cdef public object _drain_lock       # one drain at a time

    cpdef htod(self, object conn, unsigned long long dst, size_t src, Py_ssize_t count,
               unsigned long long stream, bint sync)
    cpdef dtoh(self, object conn, size_t dst, unsigned long long src, Py_ssize_t count,
               unsigned long long stream)
    cpdef object dtoh_start(self, object conn, size_t dst, unsigned long long src, Py_ssize_t count,
                            unsigned long long stream)
    cpdef dtoh_finish(self, object started)
    cpdef settle_host_range(self, size_t address, Py_ssize_t count)
