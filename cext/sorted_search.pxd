# cython: language_level=3
"""``bisect.bisect_right`` over a sorted list of addresses (Python ints up to 2**64 - 1), in C:
the client's pinned-allocation table and the server's allocation list search with it."""
from libc.stdint cimport uint64_t


cdef inline Py_ssize_t bisect_right_u64(list values, uint64_t x) except -1:
    cdef Py_ssize_t lo = 0, hi = len(values), mid
    while lo < hi:
        mid = (lo + hi) // 2
        if x < <uint64_t>values[mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo
