# cython: language_level=3
"""Entry points the libcuda.so.1 replacement calls (``cext/driver/forward.c``).

The library takes the ``cdef api`` functions below from ``__pyx_capi__`` (``cext/common/
bootstrap.c`` checks their signatures). ``cricket_drv_call`` receives a driver function's
documented name and its arguments as 64-bit words, calls the implementation registered under that
name in ``cricket.client.driver_api.IMPLEMENTATIONS`` and returns its ``CUresult`` (an entry of
the compiled guard, ``cext/driver_guard.pyx``, gets the words as they are). No exception
ever reaches C: it is logged and becomes ``CUDA_ERROR_UNKNOWN``.

The Python-visible functions are shared with the pure-Python twin ``cricket.client.cuda_api``.
"""
from libc.stdint cimport uint64_t

from cricket._cext.runtime_guard cimport Entry, call_name

import atexit
import logging

from cricket.client import driver_api
from cricket.client import graphs_driver  # noqa: F401  (graphs, capture, host functions: after driver_api)

log = logging.getLogger("cricket.client.cuda_api")

CAPI_NAMES = ("cricket_drv_attach", "cricket_drv_call")

cdef int CUDA_ERROR_NOT_SUPPORTED = 801
cdef int CUDA_ERROR_UNKNOWN = 999

cdef dict _IMPL = driver_api.IMPLEMENTATIONS
cdef set _missing_logged = set()
cdef void (*_mark_dead)() noexcept nogil
cdef bint _attached = False


def attached() -> bool:
    """True once the libcuda replacement has attached to this module."""
    return _attached


def _mark_dead_at_exit() -> None:
    # Runs in Py_FinalizeEx, before libc's atexit list: from here on the library must not touch
    # Python (cudart's exit hooks call cuLibraryUnload and cuMemFree later).
    global _attached
    if _mark_dead != NULL:
        _mark_dead()
    _attached = False


cdef api int cricket_drv_attach(void (*mark_dead)() noexcept nogil, int embedded) noexcept nogil:
    """Called once by the library; ``embedded`` when it started this interpreter itself."""
    global _mark_dead, _attached
    with gil:
        try:
            if embedded:
                from cricket import _log
                _log.configure()
            _mark_dead = mark_dead
            atexit.register(_mark_dead_at_exit)
            _attached = True
            log.debug("libcuda replacement attached")
            return 0
        except BaseException:
            try:
                log.exception("attaching the libcuda replacement failed")
            except BaseException:
                pass
            return -1


cdef api int cricket_drv_call(const char *name, const uint64_t *args, int nargs) noexcept nogil:
    with gil:
        pyname = None
        try:
            pyname = call_name(name)
            fn = _IMPL.get(pyname)
            if fn is None:
                if pyname not in _missing_logged:
                    _missing_logged.add(pyname)
                    log.warning("%s reaches Python but has no implementation in "
                                "cricket.client.driver_api; it returns CUDA_ERROR_NOT_SUPPORTED", pyname)
                return CUDA_ERROR_NOT_SUPPORTED
            if isinstance(fn, Entry):      # the compiled guard (driver_guard): the words as they are
                return (<Entry>fn).call(args, nargs)
            if nargs == 0:
                return fn()
            if nargs == 1:
                return fn(args[0])
            if nargs == 2:
                return fn(args[0], args[1])
            if nargs == 3:
                return fn(args[0], args[1], args[2])
            if nargs == 4:
                return fn(args[0], args[1], args[2], args[3])
            if nargs == 5:
                return fn(args[0], args[1], args[2], args[3], args[4])
            return fn(*[args[i] for i in range(nargs)])
        except BaseException:
            try:
                log.exception("%s failed in the cricket client", pyname or "a forwarded driver call")
            except BaseException:
                pass
            return CUDA_ERROR_UNKNOWN
