# cython: language_level=3, boundscheck=False, wraparound=False
"""Reading and writing the application's memory at raw addresses (the client runtime's out-parameters,
kernel argument arrays, copies from and to host buffers). Pure-Python twin: ``cricket.client.hostmem``.

Addresses come from the application through the libcudart shim; like the real runtime, these
functions trust them (a bad pointer crashes the application as it would with NVIDIA's library).
"""
from cpython.buffer cimport PyBUF_WRITE
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from cpython.memoryview cimport PyMemoryView_FromMemory
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libc.string cimport memcpy, memset

# The launch record's layout comes from cricket.x through rpcgen (cricket/protocol/_cricket_layout.pxd).
from cricket.protocol._cricket_layout cimport cr_launch_args_FIXED_SIZE, put_cr_launch_args_fixed
from xdr_buffer cimport xdr_put32


def store_i32(size_t addr, long long value) -> None:
    (<int32_t *>addr)[0] = <int32_t>value


def store_u32(size_t addr, unsigned long long value) -> None:
    (<uint32_t *>addr)[0] = <uint32_t>value


def store_u64(size_t addr, unsigned long long value) -> None:
    (<uint64_t *>addr)[0] = value


def store_i64s(size_t addr, values) -> None:
    """Consecutive int64 values."""
    cdef Py_ssize_t i = 0
    for v in values:
        (<int64_t *>addr)[i] = <int64_t>v
        i += 1


def store_f32(size_t addr, double value) -> None:
    (<float *>addr)[0] = <float>value


def load_u64(size_t addr) -> int:
    return (<uint64_t *>addr)[0]


def load_u32(size_t addr) -> int:
    return (<uint32_t *>addr)[0]


def read(size_t addr, Py_ssize_t size) -> bytes:
    """A copy of ``size`` bytes at ``addr``."""
    return PyBytes_FromStringAndSize(<const char *>addr, size)


def write(size_t addr, data) -> None:
    """Copy a bytes-like object to ``addr``."""
    cdef const unsigned char[::1] view = memoryview(data).cast("B")
    if view.shape[0]:
        memcpy(<void *>addr, &view[0], view.shape[0])


def view(size_t addr, Py_ssize_t size):
    """A writable memoryview of ``size`` bytes at ``addr`` (no copy; valid while the memory is)."""
    if size <= 0:
        if size < 0:
            raise ValueError(f"a view of {size} bytes")
        return memoryview(b"")
    return PyMemoryView_FromMemory(<char *>addr, size, PyBUF_WRITE)   # one object, format "B"


cdef inline int _pack_params_at(char *p, Py_ssize_t size_with_padding, size_t args, tuple layout) except -1:
    """The parameters from nvcc's argument array at their ``layout`` offsets, zeros between."""
    cdef void **argv = <void **>args
    cdef Py_ssize_t i = 0, offset, size
    memset(p, 0, size_with_padding)
    for offset, size in layout:
        memcpy(p + offset, argv[i], size)
        i += 1
    return 0


def pack_params(size_t args, tuple layout, Py_ssize_t param_size) -> bytes:
    """A kernel's parameter buffer from nvcc's argument array (``void *args[]``, one pointer per
    parameter) and the layout ``((offset, size), ...)``; sizes and offsets were checked against
    ``param_size`` when the layout was made."""
    cdef bytes out = PyBytes_FromStringAndSize(NULL, param_size)
    _pack_params_at(PyBytes_AS_STRING(out), param_size, args, layout)
    return out


def launch_record(unsigned long long function, tuple grid, tuple block, unsigned int shared_mem,
                  unsigned long long stream, size_t args, tuple layout, Py_ssize_t param_size) -> bytes:
    """The XDR encoding of ``cr_launch_args`` (cricket.x) for a launch, with the parameter buffer
    packed from nvcc's argument array in place: one allocation, no intermediate objects."""
    cdef Py_ssize_t padded = (param_size + 3) & ~3
    cdef bytes out = PyBytes_FromStringAndSize(NULL, cr_launch_args_FIXED_SIZE + padded)
    cdef char *p = PyBytes_AS_STRING(out)
    p = put_cr_launch_args_fixed(
        p, function=function, grid_x=grid[0], grid_y=grid[1], grid_z=grid[2], block_x=block[0],
        block_y=block[1], block_z=block[2], shared_mem=shared_mem, stream=stream,
        params_len=param_size)
    _pack_params_at(p, padded, args, layout)
    return out


def launch_call(bytes head, unsigned long long xid, unsigned long long function,
                unsigned long long gxy, unsigned long long gz, unsigned long long bxy,
                unsigned long long bz, unsigned long long shared_mem, unsigned long long stream,
                size_t args, tuple layout, Py_ssize_t param_size, tuple limits):
    """A whole batched ``CR_LAUNCH_ASYNC`` call record: ``head`` (record mark, xid, call header and
    credentials from ``Client.call_head``) with its record mark and ``xid`` filled in, then
    ``cr_launch_args`` with the parameters packed from nvcc's argument array. The grid and block
    come as the shim passes them (``x | y << 32`` and ``z``) and are checked against ``limits``
    (max threads per block, max block x/y/z, max grid x/y/z, max dynamic shared bytes): None when
    the configuration is invalid, for the caller to say why."""
    cdef uint32_t gx = <uint32_t>gxy, gy = <uint32_t>(gxy >> 32)
    cdef uint32_t bx = <uint32_t>bxy, by = <uint32_t>(bxy >> 32)
    cdef unsigned long long max_threads = limits[0]
    cdef unsigned long long threads = <unsigned long long>bx * by * bz
    if (threads == 0 or threads > max_threads or gx == 0 or gy == 0 or gz == 0
            or bx > <unsigned long long>limits[1] or by > <unsigned long long>limits[2]
            or bz > <unsigned long long>limits[3] or gx > <unsigned long long>limits[4]
            or gy > <unsigned long long>limits[5] or gz > <unsigned long long>limits[6]
            or shared_mem > <unsigned long long>limits[7]):
        return None
    cdef Py_ssize_t head_size = len(head)
    cdef Py_ssize_t padded = (param_size + 3) & ~3
    cdef Py_ssize_t total = head_size + cr_launch_args_FIXED_SIZE + padded
    cdef bytes out = PyBytes_FromStringAndSize(NULL, total)
    cdef char *p = PyBytes_AS_STRING(out)
    memcpy(p, PyBytes_AS_STRING(head), head_size)
    # RFC 5531: the record mark (last fragment, length after the mark), then the call's xid.
    xdr_put32(p, <uint32_t>(0x80000000u | <uint32_t>(total - 4)))
    xdr_put32(p + 4, <uint32_t>xid)
    p = put_cr_launch_args_fixed(
        p + head_size, function=function, grid_x=gx, grid_y=gy, grid_z=<uint32_t>gz, block_x=bx,
        block_y=by, block_z=<uint32_t>bz, shared_mem=<uint32_t>shared_mem, stream=stream,
        params_len=<uint32_t>param_size)
    _pack_params_at(p, padded, args, layout)
    return out
