# The runtime-API face's guard (cext/runtime_guard.pyx; pure-Python twin cricket/client/runtime_guard.py).
from libc.stdint cimport uint64_t

cdef class Entry:
    # An implementation the libcudart shim's generic entry (cext/cudart_api.pyx) calls with the C
    # argument words as they came; Python callers call it with ints, as the twin's.
    cdef int call(self, const uint64_t *args, int nargs) except? -1
    cdef object call_ints(self, tuple args)

cdef class RuntimeCall(Entry):
    cdef readonly object __wrapped__     # the implementation
    cdef readonly str __name__           # its name (the CUDA function's implementation)
    cdef readonly object runtime         # the process's Runtime
    cdef readonly bint needs_device      # fails with cudaErrorNoDevice when none is visible
    cdef int fail(self, int code) except -1     # keep ``code`` as the thread's last error, return it

cdef tuple words_tuple(const uint64_t *args, int nargs)
cdef bint ints_as_words(tuple args, uint64_t *words, int room) noexcept

# The Python name of a shim's C function name (a static string), found by its address.
cdef str call_name(const char *name)
