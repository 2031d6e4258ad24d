# cython: language_level=3
"""Entry points the libcudart.so.13 shim calls (``cext/preload/forward.c``).

The shim takes the ``cdef api`` functions below from ``__pyx_capi__`` (by name; the capsule
signatures are not part of the contract). Each one takes the GIL, converts its C arguments to
Python objects (addresses as ``int``, C strings as ``bytes``), calls the implementation registered
under the CUDA name in ``cricket.client.runtime_api.IMPLEMENTATIONS`` and converts the result
back. No exception ever reaches C: it is logged and becomes ``cudaErrorUnknown`` (or the neutral
value of the C return type), because a ``noexcept`` function would otherwise return 0, which
means ``cudaSuccess``.

``cricket_call`` is the generic entry of ``forward_runtime.c``: the CUDA function's name and its
arguments as 64-bit words, passed on as ints to the implementation of that name, or as the words
themselves to an entry of the compiled guard (``runtime_guard.Entry``: the guard makes the ints
for its implementation; ``cext/runtime_local.pyx`` answers without any).

The Python-visible functions (``CAPI_NAMES``, ``attached``, ``error_string``, ``error_name``,
``read_fatbin``) are shared with the pure-Python twin ``cricket.client.cudart_api``.
"""
from libc.stdint cimport int32_t, uint16_t, uint32_t, uint64_t
from libc.string cimport strlen
from cpython.buffer cimport PyBUF_READ
from cpython.memoryview cimport PyMemoryView_FromMemory

import atexit
import logging

from cricket._cext.runtime_guard cimport Entry, call_name
from cricket.client import runtime_api

log = logging.getLogger("cricket.client.cudart_api")

CAPI_NAMES = (
    "cricket_attach", "cricket_cudaGetErrorString", "cricket_cudaGetErrorName",
    "cricket_cudaRuntimeGetVersion", "cricket___cudaRegisterFatBinary",
    "cricket___cudaRegisterFatBinaryEnd", "cricket___cudaUnregisterFatBinary",
    "cricket___cudaRegisterFunction", "cricket___cudaRegisterVar",
    "cricket___cudaRegisterManagedVar", "cricket___cudaInitModule", "cricket_call",
)

cdef int CUDA_ERROR_INVALID_VALUE = 1
cdef int CUDA_ERROR_NOT_SUPPORTED = 801
cdef int CUDA_ERROR_UNKNOWN = 999

from cricket.cudafacts.fatbin_magic import CONTAINER_MAGIC as FATBIN_MAGIC
from cricket.cudafacts.fatbin_magic import MAX_IN_MEMORY as MAX_FATBIN_SIZE
from cricket.cudafacts.fatbin_magic import WRAPPER_MAGIC as FATBIN_WRAPPER_MAGIC

ctypedef struct fatbin_wrapper:      # __fatBinC_Wrapper_t (crt/host_runtime.h, fatbinary_section.h)
    int32_t magic
    int32_t version
    const void *data
    void *filename_or_fatbins

ctypedef struct fatbin_header:       # fatbin container header
    uint32_t magic
    uint16_t version
    uint16_t header_size
    uint64_t size

cdef dict _IMPL = runtime_api.IMPLEMENTATIONS
cdef dict _kept = {}                  # (kind, code) -> bytes handed to C, never released
cdef set _missing_logged = set()
cdef void (*_mark_dead)() noexcept nogil
cdef bint _attached = False


def attached() -> bool:
    """True once the libcudart shim has attached to this module (it then calls it for CUDA)."""
    return _attached


cdef object _impl(str name):
    fn = _IMPL.get(name)
    if fn is None and name not in _missing_logged:
        _missing_logged.add(name)
        log.warning("%s reaches Python but has no implementation in cricket.client.runtime_api; "
                    "it returns cudaErrorNotSupported", name)
    return fn


cdef void _failed(str name) noexcept:
    try:
        log.exception("%s failed in the cricket client", name)
    except BaseException:
        pass


cdef bytes _c_bytes(const char *s):
    return None if s == NULL else s[:strlen(s)]


def _mark_dead_at_exit() -> None:
    # Runs in Py_FinalizeEx, before libc's atexit list: from here on the shim must not touch
    # Python (nvcc's __cudaUnregisterFatBinary comes later).
    global _attached
    if _mark_dead != NULL:
        _mark_dead()
    _attached = False


cdef api int cricket_attach(void (*mark_dead)() noexcept nogil, int embedded) noexcept nogil:
    """Called once by the shim; ``embedded`` when the shim started this interpreter itself."""
    global _mark_dead, _attached
    with gil:
        try:
            if embedded:
                # A native program: nobody else configures logging here.
                from cricket import _log
                _log.configure()
            _mark_dead = mark_dead
            atexit.register(_mark_dead_at_exit)
            _attached = True
            log.debug("libcudart shim attached")
            return 0
        except BaseException:
            _failed("attach")
            return -1


# ------------------------------------------------------------------ errors and versions

def error_string(code: int) -> bytes:
    """The message for ``code`` as the C caller gets it (the same object on every call)."""
    return _kept_text("cudaGetErrorString", code)


def error_name(code: int) -> bytes:
    return _kept_text("cudaGetErrorName", code)


cdef bytes _kept_text(str name, int code):
    key = (name, code)
    text = _kept.get(key)
    if text is None:
        fn = _impl(name)
        text = b"cricket: " + name.encode() + b" is not implemented" if fn is None else bytes(fn(code))
        if b"\0" in text:
            raise ValueError(f"{name}({code}) returned a string with a NUL byte")
        text = _kept.setdefault(key, text)
    return text


cdef api const char *cricket_cudaGetErrorString(int error) noexcept nogil:
    with gil:
        try:
            return _kept_text("cudaGetErrorString", error)
        except BaseException:
            _failed("cudaGetErrorString")
            return "cricket: cudaGetErrorString failed (see the log)"


cdef api const char *cricket_cudaGetErrorName(int error) noexcept nogil:
    with gil:
        try:
            return _kept_text("cudaGetErrorName", error)
        except BaseException:
            _failed("cudaGetErrorName")
            return "cudaErrorUnknown"


cdef api int cricket_cudaRuntimeGetVersion(int *version) noexcept nogil:
    if version == NULL:
        return CUDA_ERROR_INVALID_VALUE
    with gil:
        try:
            fn = _impl("cudaRuntimeGetVersion")
            if fn is None:
                return CUDA_ERROR_NOT_SUPPORTED
            err, value = fn()
            if err == 0:
                version[0] = value
            return err
        except BaseException:
            _failed("cudaRuntimeGetVersion")
            return CUDA_ERROR_UNKNOWN


# ------------------------------------------------------------------ registration

def read_fatbin(wrapper: int) -> tuple:
    """``(magic, version, image)`` of the ``__fatBinC_Wrapper_t`` at address ``wrapper``.

    ``image`` is the fatbin container (header and payload), a read-only memoryview of the memory
    it lies in (no copy), when the wrapper points at one, else None. Raises ValueError for a container whose declared size is implausible.
    """
    return _read_fatbin(<const fatbin_wrapper *><size_t>wrapper)


cdef tuple _read_fatbin(const fatbin_wrapper *w):
    if w == NULL:
        return (0, 0, None)
    cdef const fatbin_header *h = <const fatbin_header *>w.data
    if w.magic != FATBIN_WRAPPER_MAGIC or h == NULL or h.magic != FATBIN_MAGIC:
        return (<uint32_t>w.magic, w.version, None)
    cdef uint64_t total = <uint64_t>h.header_size + h.size
    if h.header_size < sizeof(fatbin_header) or total > MAX_FATBIN_SIZE:
        raise ValueError(f"fatbin at {<size_t>h:#x} declares {h.header_size} + {h.size} bytes; "
                         "it is corrupt or not a fatbin")
    # A read-only view of the mapped section, not a copy (PyTorch registers ~345 MB of them); it
    # is read at first use, and __cudaUnregisterFatBinary comes before the library is unmapped.
    return (<uint32_t>w.magic, w.version, PyMemoryView_FromMemory(<char *>h, <Py_ssize_t>total, PyBUF_READ))


cdef api void **cricket___cudaRegisterFatBinary(void *fat_cubin) noexcept nogil:
    with gil:
        try:
            fn = _impl("__cudaRegisterFatBinary")
            if fn is None:
                return NULL
            magic, version, image = _read_fatbin(<const fatbin_wrapper *>fat_cubin)
            return <void **><size_t>fn(<size_t>fat_cubin, magic, version, image)
        except BaseException:
            _failed("__cudaRegisterFatBinary")
            return NULL


cdef api void cricket___cudaRegisterFatBinaryEnd(void **handle) noexcept nogil:
    with gil:
        try:
            fn = _impl("__cudaRegisterFatBinaryEnd")
            if fn is not None:
                fn(<size_t>handle)
        except BaseException:
            _failed("__cudaRegisterFatBinaryEnd")


cdef api void cricket___cudaUnregisterFatBinary(void **handle) noexcept nogil:
    with gil:
        try:
            fn = _impl("__cudaUnregisterFatBinary")
            if fn is not None:
                fn(<size_t>handle)
        except BaseException:
            _failed("__cudaUnregisterFatBinary")


cdef api void cricket___cudaRegisterFunction(void **handle, const char *host_fun, char *device_fun,
                                             const char *device_name, int thread_limit, void *tid,
                                             void *bid, void *block_dim, void *grid_dim,
                                             int *warp_size) noexcept nogil:
    # nvcc passes -1 and NULLs for the launch-bound arguments; they carry no information.
    with gil:
        try:
            fn = _impl("__cudaRegisterFunction")
            if fn is not None:
                fn(<size_t>handle, <size_t>host_fun, _c_bytes(device_fun), _c_bytes(device_name),
                   thread_limit)
        except BaseException:
            _failed("__cudaRegisterFunction")


cdef api void cricket___cudaRegisterVar(void **handle, char *host_var, char *device_address,
                                        const char *device_name, int ext, size_t size,
                                        int constant, int is_global) noexcept nogil:
    with gil:
        try:
            fn = _impl("__cudaRegisterVar")
            if fn is not None:
                fn(<size_t>handle, <size_t>host_var, _c_bytes(device_address), _c_bytes(device_name),
                   ext, size, constant, is_global)
        except BaseException:
            _failed("__cudaRegisterVar")


cdef api void cricket___cudaRegisterManagedVar(void **handle, void **host_var_ptr_address,
                                               char *device_address, const char *device_name,
                                               int ext, size_t size, int constant,
                                               int is_global) noexcept nogil:
    with gil:
        try:
            fn = _impl("__cudaRegisterManagedVar")
            if fn is not None:
                fn(<size_t>handle, <size_t>host_var_ptr_address, _c_bytes(device_address),
                   _c_bytes(device_name), ext, size, constant, is_global)
        except BaseException:
            _failed("__cudaRegisterManagedVar")


cdef api char cricket___cudaInitModule(void **handle) noexcept nogil:
    with gil:
        try:
            fn = _impl("__cudaInitModule")
            if fn is None:
                return 0
            return 1 if fn(<size_t>handle) else 0
        except BaseException:
            _failed("__cudaInitModule")
            return 0


# ------------------------------------------------------------------ the generic entry



cdef api int cricket_call(const char *name, const uint64_t *args, int nargs) noexcept nogil:
    """``forward_runtime.c``: call the implementation of ``name`` with ``nargs`` integer arguments;
    it returns the cudaError_t (or the function's integer result) and writes out-parameters itself
    (``cricket.client.hostmem``)."""
    with gil:
        pyname = None
        try:
            pyname = call_name(name)
            fn = _IMPL.get(pyname)
            if fn is None:
                _impl(pyname)
                return CUDA_ERROR_NOT_SUPPORTED
            if isinstance(fn, Entry):      # the compiled guard's, or answered in C (runtime_local)
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
            if nargs == 8:             # the launches
                return fn(args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7])
            return fn(*[args[i] for i in range(nargs)])
        except BaseException:
            _failed(pyname or "a forwarded CUDA call")
            return CUDA_ERROR_UNKNOWN
