# The blocking RPC call in C (cext/rpc_call.pyx; pure-Python twin cricket/rpc/rpc_call.py).

from cricket._cext.record cimport RecordReader

cdef class CallPath:
    cdef object _client           # a weak reference to the rpc.Client it serves (its rare paths)
    cdef object _sock             # kept open while this path uses its descriptor
    cdef int _fd
    cdef RecordReader _reader
    cdef bytearray _rbuf          # the client's receive buffer
    cdef bytes _auth              # credential and verifier, as every call sends them
    cdef unsigned char _head[1024]    # record mark, xid, call header, credential and verifier
    cdef Py_ssize_t _head_size    # bytes of _head after the record mark
    cdef object _acquire          # the client's send lock
    cdef object _release
    cdef object _lock_acquire     # the client's lock over its reader role
    cdef object _lock_release
    cdef object _xids             # the client's xid counter
    cdef public bint plain        # replies carry no verifier to check (AUTH_NONE's)
    cdef public double spin       # seconds to poll for a reply before sleeping in the read
    cdef public bint yield_cpu    # give the CPU away between polls
    cdef public bint reading      # the client's reader role: one thread reads the socket at a time
    cdef public int sleepers      # threads asleep on the client's condition (both under its _lock)

    cpdef object call(self, unsigned int prog, unsigned int vers, unsigned int proc,
                      object buffers)
    cdef object _exchange(self, unsigned int xid, unsigned int prog, unsigned int vers,
                          unsigned int proc, object buffers, double timeout)
    cpdef object receive(self, unsigned int xid, double timeout)
    cdef _send_rest(self, Py_ssize_t sent, int err, object buffers)
    cdef object _result(self, bytes record)
    cdef object _owner(self)
