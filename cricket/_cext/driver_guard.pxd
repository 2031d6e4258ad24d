# The driver-API face's guard (cext/driver_guard.pyx; pure-Python twin cricket/client/driver_guard.py).
from cricket._cext.runtime_guard cimport Entry

cdef class DriverCall(Entry):
    cdef readonly object __wrapped__     # the implementation
    cdef readonly str __name__           # its name
    cdef readonly object runtime         # the process's Runtime
