"""hostmem (Cython) and its pure-Python twin read and write the same bytes."""
from __future__ import annotations

import ctypes
import importlib
import struct

import pytest


@pytest.fixture(params=["cricket._cext.hostmem", "cricket.client.hostmem"])
def hostmem(request):
    try:
        return importlib.import_module(request.param)
    except ImportError:
        pytest.skip(f"{request.param} is not built (make build)")


def test_stores_write_the_c_types(hostmem):
    buf = ctypes.create_string_buffer(32)
    a = ctypes.addressof(buf)
    hostmem.store_i32(a, -2)
    hostmem.store_u32(a + 4, 0xFFFFFFFE)
    hostmem.store_u64(a + 8, 1 << 63)
    hostmem.store_f32(a + 16, 1.5)
    hostmem.store_i64s(a + 20 - 4, [])            # no values: nothing written
    assert struct.unpack_from("<iIQf", buf.raw) == (-2, 0xFFFFFFFE, 1 << 63, 1.5)
    assert hostmem.load_u64(a + 8) == 1 << 63 and hostmem.load_u32(a + 4) == 0xFFFFFFFE


def test_read_write_and_view_share_the_memory(hostmem):
    buf = ctypes.create_string_buffer(b"abcdefgh", 8)
    a = ctypes.addressof(buf)
    assert hostmem.read(a + 2, 3) == b"cde"
    hostmem.write(a, b"XY")
    hostmem.write(a + 6, memoryview(b"!?"))
    assert buf.raw == b"XYcdef!?"
    view = hostmem.view(a, 8)
    view[2] = ord("Z")
    assert buf.raw[2:3] == b"Z" and bytes(hostmem.view(a, 0)) == b""


def test_pack_params_copies_each_argument_to_its_offset(hostmem):
    # nvcc's argument array: one pointer per parameter, pointing at the argument's value
    x = ctypes.c_uint64(0x1122334455667788)
    n = ctypes.c_int32(-5)
    s = ctypes.create_string_buffer(b"\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c", 12)
    args = (ctypes.c_void_p * 3)(ctypes.addressof(x), ctypes.addressof(n), ctypes.addressof(s))
    out = hostmem.pack_params(ctypes.addressof(args), ((0, 8), (8, 4), (16, 12)), 32)
    assert out == struct.pack("<Qi4x", 0x1122334455667788, -5) + s.raw + b"\0" * 4


def test_launch_record_is_the_xdr_of_cr_launch_args(hostmem):
    from cricket.protocol import gen as P
    x = ctypes.c_uint64(0xDEADBEEF00)
    n = ctypes.c_int16(-3)                         # a 2-byte parameter: the buffer needs padding
    args = (ctypes.c_void_p * 2)(ctypes.addressof(x), ctypes.addressof(n))
    record = hostmem.launch_record(7, (2, 3, 4), (32, 1, 1), 128, 9, ctypes.addressof(args),
                                   ((0, 8), (8, 2)), 10)
    expected = P.pack_cr_launch_args(P.cr_launch_args(
        function=7, grid=P.cr_dim3(x=2, y=3, z=4), block=P.cr_dim3(x=32, y=1, z=1), shared_mem=128,
        stream=9, params=struct.pack("<Qh", 0xDEADBEEF00, -3)))
    assert record == expected
    empty = hostmem.launch_record(1, (1, 1, 1), (1, 1, 1), 0, 0, 0, (), 0)
    assert empty == P.pack_cr_launch_args(P.cr_launch_args(
        function=1, grid=P.cr_dim3(x=1, y=1, z=1), block=P.cr_dim3(x=1, y=1, z=1), shared_mem=0,
        stream=0, params=b""))


LIMITS = (1024, 1024, 1024, 64, 0x7FFFFFFF, 65535, 65535, 49152)


def test_launch_call_is_one_whole_rpc_call_record(hostmem):
    """The launch path's record: the client's call head with record mark and xid filled in, then
    cr_launch_args; the server's record reader and message decoder take it as a call."""
    from cricket.protocol import PROGRAM, VERSION
    from cricket.protocol import gen as P
    x = ctypes.c_uint64(0xDEADBEEF00)
    n = ctypes.c_int16(-3)
    args = (ctypes.c_void_p * 2)(ctypes.addressof(x), ctypes.addressof(n))
    head = struct.pack(">7I", 0, 0, 0, 2, PROGRAM, VERSION, 5) + b"\0" * 16   # AUTH_NONE cred, verf
    record = hostmem.launch_call(head, 0x1234ABCD, 7, 2 | 3 << 32, 4, 32 | 1 << 32, 1, 128, 9,
                                 ctypes.addressof(args), ((0, 8), (8, 2)), 10, LIMITS)
    mark, = struct.unpack(">I", record[:4])
    assert mark == 0x80000000 | (len(record) - 4)                 # one last fragment: the rest
    xid, mtype, rpcvers, prog, vers, proc = struct.unpack(">6I", record[4:28])
    assert (xid, mtype, rpcvers, prog, vers, proc) == (0x1234ABCD, 0, 2, PROGRAM, VERSION, 5)
    assert record[28:44] == b"\0" * 16
    assert record[44:] == P.pack_cr_launch_args(P.cr_launch_args(
        function=7, grid=P.cr_dim3(x=2, y=3, z=4), block=P.cr_dim3(x=32, y=1, z=1), shared_mem=128,
        stream=9, params=struct.pack("<Qh", 0xDEADBEEF00, -3)))


@pytest.mark.parametrize("grid, block, shared", [
    ((0, 1, 1), (1, 1, 1), 0),              # an empty grid
    ((1, 1, 1), (0, 1, 1), 0),              # an empty block
    ((1, 1, 1), (1025, 1, 1), 0),           # more threads than a block holds
    ((1, 1, 1), (32, 32, 2), 0),            # 2048 threads
    ((1, 1, 1), (1, 1, 65), 0),             # block z past its limit
    ((1, 65536, 1), (1, 1, 1), 0),          # grid y past its limit
    ((1, 1, 1), (1, 1, 1), 49153),          # more dynamic shared memory than the device has
])
def test_launch_call_refuses_a_configuration_past_the_limits(hostmem, grid, block, shared):
    head = b"\0" * 44
    got = hostmem.launch_call(head, 1, 7, grid[0] | grid[1] << 32, grid[2], block[0] | block[1] << 32,
                              block[2], shared, 0, 0, (), 0, LIMITS)
    assert got is None
    ok = hostmem.launch_call(head, 1, 7, 1 | 1 << 32, 1, 1024 | 1 << 32, 1, 49152, 0, 0, (), 0, LIMITS)
    assert ok is not None and len(ok) == 44 + 48
