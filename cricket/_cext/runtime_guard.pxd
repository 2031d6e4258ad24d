# The runtime-API face's guard (cext/runtime_guard.pyx; pure-Python twin cricket/client/runtime_guard.py).

cdef class RuntimeCall:
    cdef readonly object __wrapped__     # the implementation
    cdef readonly str __name__           # its name (the CUDA function's implementation)
    cdef readonly object runtime         # the process's Runtime
    cdef readonly bint needs_device      # fails with cudaErrorNoDevice when none is visible
