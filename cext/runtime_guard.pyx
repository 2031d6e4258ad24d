# cython: language_level=3
"""The runtime-API face's guard in Cython: it wraps every call the libcudart shim forwards.
Interface: ``cricket/_cext/runtime_guard.pxd``; pure-Python twin (same API, documented there):
``cricket/client/runtime_guard.py``.

``Entry.call`` is how ``cext/cudart_api.pyx`` calls an entry of this module (or one of
``cext/runtime_local.pyx``, which answer in C): with the shim's argument words, making Python ints
of them only for a Python implementation. A Python caller calls an entry as the twin's.
"""
from cpython.long cimport PyLong_FromUnsignedLongLong
from cpython.ref cimport PyObject, Py_INCREF
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM
from libc.stdint cimport uint64_t
from libc.string cimport strlen

from cricket.client import runtime_guard as _twin

# The rare paths (no device, several devices, an exception) are the twin's functions.
cdef object _guarded_call = _twin.guarded_call
cdef object _failed = _twin.failed

cdef enum:
    WORDS = 16      # room for a Python caller's arguments as words (the shim passes at most 12)
    NAME_SLOTS = 1024


# The shims' entries pass the CUDA function's name, a static C string: its str is found by the
# string's address, in a direct-mapped table first (no Python int made for the address), else in
# the dict that keeps every name made.
cdef dict _names = {}
cdef const char *_slot_name[NAME_SLOTS]
cdef PyObject *_slot_str[NAME_SLOTS]


cdef str call_name(const char *name):
    cdef size_t slot = (<size_t>name >> 3) % NAME_SLOTS
    if _slot_name[slot] == name:
        return <str><object>_slot_str[slot]
    text = _names.get(<size_t>name)
    if text is None:
        text = _names.setdefault(<size_t>name, name[:strlen(name)].decode())
    _slot_str[slot] = <PyObject *>text        # (the dict holds the reference)
    _slot_name[slot] = name
    return text


cdef tuple words_tuple(const uint64_t *args, int nargs):
    """The argument words as the Python ints an implementation takes."""
    cdef tuple out = PyTuple_New(nargs)
    cdef int i
    for i in range(nargs):
        value = PyLong_FromUnsignedLongLong(args[i])
        Py_INCREF(value)
        PyTuple_SET_ITEM(out, i, value)
    return out


cdef bint ints_as_words(tuple args, uint64_t *words, int room) noexcept:
    """Python ints as the shim's words, when each is one (an int from 0 to 2**64 - 1)."""
    cdef Py_ssize_t i, n = len(args)
    if n > room:
        return False
    for i in range(n):
        a = args[i]
        if type(a) is not int or a < 0 or a > 0xFFFFFFFFFFFFFFFF:
            return False
        words[i] = <uint64_t>a
    return True


cdef class Entry:
    def __call__(self, *args):
        return self.call_ints(args)

    cdef int call(self, const uint64_t *args, int nargs) except? -1:
        return self.call_ints(words_tuple(args, nargs))

    cdef object call_ints(self, tuple args):
        cdef uint64_t words[WORDS]
        if not ints_as_words(args, words, WORDS):
            raise TypeError(f"{type(self).__name__} takes the shim's integer arguments")
        return self.call(words, <int>len(args))


cdef class RuntimeCall(Entry):
    def __init__(self, fn, runtime, needs_device):
        self.__wrapped__ = fn
        self.__name__ = fn.__name__
        self.runtime = runtime
        self.needs_device = needs_device

    @property
    def __qualname__(self):
        return self.__name__

    cdef object call_ints(self, tuple args):
        runtime = self.runtime
        if runtime.no_device or runtime.multi_device:
            return _guarded_call(self, args)
        try:
            code = self.__wrapped__(*args)
        except Exception as exc:
            return _failed(self, exc)
        if code:
            runtime.thread.last_error = code
            return code
        return 0

    cdef int fail(self, int code) except -1:
        if code:
            self.runtime.thread.last_error = code
        return code
