"""Both XDR implementations encode exactly as RFC 4506 (and xdrlib3) say, and round-trip."""
from __future__ import annotations

import math
import struct

import pytest
import xdrlib3
from hypothesis import given, settings, strategies as st

from cricket.xdr.errors import XdrError, XdrValueError

INT32 = st.integers(-2**31, 2**31 - 1)
UINT32 = st.integers(0, 2**32 - 1)
INT64 = st.integers(-2**63, 2**63 - 1)
UINT64 = st.integers(0, 2**64 - 1)


def test_scalars_encode_big_endian_words(xdr):
    p = xdr.Packer()
    p.pack_int(-2)
    p.pack_uint(0xDEADBEEF)
    p.pack_enum(7)
    p.pack_bool(True)
    p.pack_bool(False)
    p.pack_hyper(-1)
    p.pack_uhyper(2**64 - 1)
    p.pack_float(1.5)
    p.pack_double(-0.25)
    assert p.get_buffer() == (
        b"\xff\xff\xff\xfe" b"\xde\xad\xbe\xef" b"\0\0\0\x07" b"\0\0\0\x01" b"\0\0\0\0"
        + b"\xff" * 8 + b"\xff" * 8 + struct.pack(">f", 1.5) + struct.pack(">d", -0.25))
    assert len(p) == 4 * 5 + 8 * 2 + 4 + 8


def test_opaque_string_and_padding(xdr):
    p = xdr.Packer()
    p.pack_fopaque(3, b"abc")
    p.pack_opaque(b"hello")
    p.pack_string("hi")
    p.pack_string(b"")
    assert p.get_buffer() == (b"abc\0" b"\0\0\0\x05hello\0\0\0" b"\0\0\0\x02hi\0\0" b"\0\0\0\0")
    u = xdr.Unpacker(p.get_buffer())
    assert u.unpack_fopaque(3) == b"abc"
    assert u.unpack_opaque() == b"hello"
    assert u.unpack_string() == "hi"
    assert u.unpack_string() == ""
    u.done()


def test_quadruple_is_sixteen_raw_bytes(xdr):
    q = bytes(range(16))
    p = xdr.Packer()
    p.pack_quadruple(q)
    assert p.get_buffer() == q
    assert xdr.Unpacker(q).unpack_quadruple() == q
    with pytest.raises(XdrValueError):
        p.pack_quadruple(b"short")


@settings(max_examples=60, deadline=None)
@given(i=INT32, u=UINT32, h=INT64, uh=UINT64, d=st.floats(allow_nan=False),
       f=st.floats(width=32, allow_nan=False), b=st.booleans(), o=st.binary(max_size=40),
       s=st.text(max_size=20))
def test_matches_xdrlib3_and_round_trips(xdr, i, u, h, uh, d, f, b, o, s):
    ours = xdr.Packer()
    ref = xdrlib3.Packer()
    for name, v in (("int", i), ("uint", u), ("hyper", h), ("uhyper", uh), ("double", d),
                    ("float", f), ("bool", b), ("opaque", o)):
        getattr(ours, f"pack_{name}")(v)
        getattr(ref, f"pack_{name}")(v)
    ours.pack_string(s)
    ref.pack_string(s.encode())
    data = ours.get_buffer()
    assert data == ref.get_buffer()
    un = xdr.Unpacker(data)
    assert (un.unpack_int(), un.unpack_uint(), un.unpack_hyper(), un.unpack_uhyper(),
            un.unpack_double(), un.unpack_float(), un.unpack_bool(), un.unpack_opaque(),
            un.unpack_string()) == (i, u, h, uh, d, f, b, o, s)
    assert un.remaining() == 0
    un.done()


def test_nan_and_infinity_survive(xdr):
    p = xdr.Packer()
    p.pack_double(math.inf)
    p.pack_float(-math.inf)
    p.pack_double(math.nan)
    u = xdr.Unpacker(p.get_buffer())
    assert u.unpack_double() == math.inf
    assert u.unpack_float() == -math.inf
    assert math.isnan(u.unpack_double())


@pytest.mark.parametrize("method,value", [
    ("pack_int", 2**31), ("pack_int", -2**31 - 1), ("pack_uint", -1), ("pack_uint", 2**32),
    ("pack_hyper", 2**63), ("pack_uhyper", -1), ("pack_uhyper", 2**64), ("pack_int", 1.5),
    ("pack_int", "7"), ("pack_float", 1e300), ("pack_double", "x"), ("pack_opaque", 5),
    ("pack_string", 3.0),
])
def test_unencodable_values_raise_xdr_value_error(xdr, method, value):
    p = xdr.Packer()
    with pytest.raises(XdrValueError):
        getattr(p, method)(value)
    assert isinstance(XdrValueError(), (XdrError, ValueError))


def test_non_utf8_string_bytes_round_trip(xdr):
    raw = b"caf\xe9\x00!"
    p = xdr.Packer()
    p.pack_string(raw)
    s = xdr.Unpacker(p.get_buffer()).unpack_string()
    p2 = xdr.Packer()
    p2.pack_string(s)
    assert p2.get_buffer() == p.get_buffer()


def test_pack_raw_appends_encoded_xdr_and_rejects_unaligned(xdr):
    inner = xdr.Packer()
    inner.pack_int(5)
    p = xdr.Packer()
    p.pack_uint(1)
    p.pack_raw(inner.get_buffer())
    assert p.get_buffer() == b"\0\0\0\x01\0\0\0\x05"
    with pytest.raises(XdrValueError):
        p.pack_raw(b"abc")


def test_reset_empties_the_packer(xdr):
    p = xdr.Packer()
    p.pack_opaque(b"x" * (xdr.ZERO_COPY_MIN + 1))
    p.reset()
    assert len(p) == 0 and p.get_buffer() == b"" and p.get_buffers() == []
    p.pack_int(1)
    assert p.get_buffer() == b"\0\0\0\x01"


def test_packer_grows_past_its_initial_buffer(xdr):
    p = xdr.Packer()
    for i in range(5000):
        p.pack_uint(i)
    data = p.get_buffer()
    assert len(data) == len(p) == 20000
    assert struct.unpack(">5000I", data) == tuple(range(5000))


@settings(max_examples=40, deadline=None)
@given(values=st.lists(INT32, max_size=50), uvalues=st.lists(UINT32, max_size=50))
def test_int_arrays_in_one_call_match_item_by_item(xdr, values, uvalues):
    one = xdr.Packer()
    one.pack_int_array(values, 50)
    one.pack_int_array(uvalues, unsigned=True)
    one.pack_int_array(values[:3] + [0] * (3 - len(values[:3])), fixed=3)
    ref = xdrlib3.Packer()
    ref.pack_array(values, ref.pack_int)
    ref.pack_array(uvalues, ref.pack_uint)
    ref.pack_farray(3, values[:3] + [0] * (3 - len(values[:3])), ref.pack_int)
    assert one.get_buffer() == ref.get_buffer()
    u = xdr.Unpacker(one.get_buffer())
    assert u.unpack_int_array(50) == values
    assert u.unpack_int_array(unsigned=True) == uvalues
    assert u.unpack_int_array(fixed=3) == values[:3] + [0] * (3 - len(values[:3]))
    u.done()


def test_int_array_checks(xdr):
    from cricket.xdr.errors import XdrLengthError, XdrTruncatedError
    p = xdr.Packer()
    with pytest.raises(XdrLengthError):
        p.pack_int_array([1, 2, 3], 2)
    with pytest.raises(XdrValueError):
        p.pack_int_array([1, 2**31])
    with pytest.raises(XdrValueError):
        p.pack_int_array([-1], unsigned=True)
    with pytest.raises(XdrValueError):
        p.pack_int_array([1], fixed=2)
    with pytest.raises(XdrTruncatedError):
        xdr.Unpacker(b"\x7f\xff\xff\xff\0\0\0\0").unpack_int_array()
    with pytest.raises(XdrTruncatedError):
        xdr.Unpacker(b"\0\0\0\0").unpack_int_array(fixed=2)
