# Record marking (cext/record.pyx; pure-Python twin cricket/rpc/_record.py): the reader's state, for
# the blocking call in C (cext/rpc_call.pyx), which reads records with it.

cdef class RecordReader:
    cdef Py_ssize_t _max
    cdef unsigned char _hdr[4]
    cdef int _hdr_len
    cdef list _parts
    cdef Py_ssize_t _size
    cdef Py_ssize_t _frag_left
    cdef bint _in_header
    cdef bint _last
    cdef bytes _rec           # a one-fragment record being filled in place, else None
    cdef Py_ssize_t _fill     # bytes of _rec filled so far

    cdef list _feed(self, const unsigned char *p, Py_ssize_t n)
