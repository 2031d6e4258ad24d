"""Generated codecs decode int arrays exactly, across every value range, and check narrowed types."""
from __future__ import annotations

import struct

import pytest

from cricket.xdr.errors import XdrTruncatedError, XdrValueError
from rpcgen_testlib import DATA, generate_with_codec

# Around the boundaries where a decoder may treat values differently (shared small ints, sign).
EDGES = [0, 1, 255, 256, 257, 65535, 65536, 65537, 2**31 - 1, -1, -5, -6, -65536, -2**31]


@pytest.fixture(scope="module", params=["pure", "cython"])
def arrays(request, tmp_path_factory):
    return generate_with_codec(request.param, DATA / "int_arrays.x", tmp_path_factory.mktemp("arrays"),
                               f"arrays_{request.param}")


def test_ints_decode_exactly_across_the_value_range(arrays):
    values = EDGES + list(range(65500, 65600)) + EDGES
    data = arrays.pack_ints(values)
    assert data == struct.pack(f">I{len(values)}i", len(values), *values)
    for _ in range(2):                      # a second decode of the same values is still exact
        back = arrays.unpack_ints(data)
        assert back == values and all(type(v) is int for v in back)


def test_unsigned_values_above_the_signed_range_decode_as_positive(arrays):
    values = [2**32 - 1, 2**31, 65535, 65536, 0]
    assert arrays.unpack_uints(struct.pack(">I5I", 5, *values)) == values


def test_narrowed_items_out_of_range_are_refused_on_decode(arrays):
    assert arrays.unpack_shorts(struct.pack(">I3i", 3, -32768, 7, 32767)) == [-32768, 7, 32767]
    with pytest.raises(XdrValueError, match="32768"):
        arrays.unpack_shorts(struct.pack(">I3i", 3, 1, 32768, 2))
    assert arrays.unpack_ushorts(struct.pack(">3I", 0, 65535, 9)) == [0, 65535, 9]
    with pytest.raises(XdrValueError, match="4294967295"):   # an unsigned short reads the word unsigned
        arrays.unpack_ushorts(struct.pack(">3i", 0, -1, 9))


def test_an_array_longer_than_its_bytes_is_refused_before_decoding(arrays):
    with pytest.raises(XdrTruncatedError):
        arrays.unpack_ints(struct.pack(">I2i", 1_000_000, 1, 2))
