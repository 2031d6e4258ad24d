"""Malformed XDR raises a clear XdrError at once and allocates nothing large."""
from __future__ import annotations

import tracemalloc

import pytest

from cricket.xdr.errors import (XdrDiscriminantError, XdrError, XdrLengthError,
                                XdrTruncatedError)

HUGE = b"\x7f\xff\xff\xff"


@pytest.mark.parametrize("method,data", [
    ("unpack_int", b"\0\0\0"), ("unpack_uint", b""), ("unpack_hyper", b"\0" * 7),
    ("unpack_uhyper", b"\0" * 4), ("unpack_double", b"\0"), ("unpack_float", b"\0\0"),
    ("unpack_bool", b"\0"), ("unpack_opaque", b"\0\0\0\x05abcd"),
    ("unpack_string", b"\0\0\0\x02h"), ("unpack_quadruple", b"\0" * 15),
])
def test_truncated_input_raises_truncated_error(xdr, method, data):
    with pytest.raises(XdrTruncatedError, match="truncated"):
        getattr(xdr.Unpacker(data), method)()


def test_fixed_opaque_needs_its_padding_too(xdr):
    with pytest.raises(XdrTruncatedError):
        xdr.Unpacker(b"abc").unpack_fopaque(3)
    assert xdr.Unpacker(b"abc\xff").unpack_fopaque(3) == b"abc"  # padding is not checked


@pytest.mark.parametrize("method", ["unpack_opaque", "unpack_string", "unpack_opaque_view"])
def test_huge_length_on_short_buffer_fails_without_allocating(xdr, method):
    data = HUGE + b"abcd"
    tracemalloc.start()
    with pytest.raises(XdrTruncatedError):
        getattr(xdr.Unpacker(data), method)()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 1 << 20


def test_huge_array_count_fails_without_allocating(xdr):
    tracemalloc.start()
    with pytest.raises(XdrTruncatedError):
        xdr.Unpacker(HUGE + b"\0" * 8).unpack_array_length(None)
    assert tracemalloc.get_traced_memory()[1] < 1 << 20
    tracemalloc.stop()


def test_array_count_checked_against_item_size(xdr):
    data = b"\0\0\0\x03" + b"\0" * 8  # 3 ints promised, 2 present
    with pytest.raises(XdrTruncatedError):
        xdr.Unpacker(data).unpack_array_length(10, 4)
    assert xdr.Unpacker(data).unpack_array_length(10, 2) == 3


@pytest.mark.parametrize("method", ["unpack_opaque", "unpack_string", "unpack_opaque_view"])
def test_length_over_declared_maximum_raises_length_error(xdr, method):
    data = b"\0\0\0\x05hello\0\0\0"
    with pytest.raises(XdrLengthError, match="maximum 4"):
        getattr(xdr.Unpacker(data), method)(4)
    assert len(getattr(xdr.Unpacker(data), method)(5)) == 5


def test_array_count_over_maximum_raises_length_error(xdr):
    with pytest.raises(XdrLengthError):
        xdr.Unpacker(b"\0\0\0\x03" + b"\0" * 12).unpack_array_length(2)


def test_packing_over_maximum_raises_length_error(xdr):
    p = xdr.Packer()
    with pytest.raises(XdrLengthError):
        p.pack_opaque(b"abcde", 4)
    with pytest.raises(XdrLengthError):
        p.pack_string("abcde", 4)
    with pytest.raises(XdrLengthError):
        p.pack_array_length(3, 2)
    assert len(p) == 0


@pytest.mark.parametrize("word", [b"\0\0\0\x02", b"\xff\xff\xff\xff"])
def test_bool_other_than_zero_or_one_is_a_discriminant_error(xdr, word):
    with pytest.raises(XdrDiscriminantError, match="bool"):
        xdr.Unpacker(word).unpack_bool()


def test_leftover_bytes_detected_by_done(xdr):
    u = xdr.Unpacker(b"\0\0\0\x01\0\0\0\x02")
    u.unpack_int()
    with pytest.raises(XdrError, match="4 bytes left"):
        u.done()


def test_errors_are_value_errors():
    for cls in (XdrError, XdrTruncatedError, XdrLengthError, XdrDiscriminantError):
        assert issubclass(cls, ValueError)
