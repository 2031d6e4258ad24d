# The launch queue's interface (cext/launch_queue.pyx; pure-Python twin cricket/client/launch_queue.py).

cdef class LaunchQueue:
    cdef public object limits_of     # device -> its eight launch limits
    cdef public object mapped        # MappedMemory: the host's writes to it go before a launch
    cdef public object stats         # Stats: .launches counts what was queued
    cdef dict _limits                # device -> the eight limits, as asked once
    cdef object _rpc                 # the RPC client _head was made for
    cdef bytes _head                 # its CR_LAUNCH_ASYNC call head

    cpdef tuple limits(self, long device)
    cpdef forget(self)
    cpdef bint queue(self, object rpc, long device, unsigned long long function,
                     unsigned long long gxy, unsigned long long gz, unsigned long long bxy,
                     unsigned long long bz, unsigned long long shared, unsigned long long stream,
                     size_t args, tuple layout, Py_ssize_t param_size) except -1
