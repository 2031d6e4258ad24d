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
