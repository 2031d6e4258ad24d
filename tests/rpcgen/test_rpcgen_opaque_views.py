"""Generated codecs decode large variable-length opaques as read-only views (both codecs alike)."""
from __future__ import annotations

import gc

import pytest

from cricket.xdr import Packer, Unpacker, VIEW_MIN
from rpcgen_testlib import DATA, generate_with_codec


@pytest.fixture(scope="module", params=["pure", "cython"])
def views(request, tmp_path_factory):
    return generate_with_codec(request.param, DATA / "views.x", tmp_path_factory.mktemp("views"),
                               f"views_{request.param}")


def _chunk(views, n=VIEW_MIN * 2):
    return views.chunk(addr=0x7F0000001000, data=bytes(range(256)) * (n // 256), small=b"s" * 1000,
                       capped=b"c" * 65535)


def test_large_opaque_decodes_as_a_view_into_the_record(views):
    record = views.pack_chunk(_chunk(views))
    value = views.unpack_chunk(record)
    assert isinstance(value.data, memoryview) and value.data.readonly
    assert value.data.obj is record
    assert value == _chunk(views)


def test_opaques_that_cannot_reach_the_threshold_stay_bytes(views):
    value = views.unpack_chunk(views.pack_chunk(_chunk(views)))
    assert type(value.small) is bytes and type(value.capped) is bytes


def test_generated_python_says_which_fields_may_be_views(views):
    import inspect
    source = inspect.getsource(views)
    assert "_u.unpack_opaque_or_view(None)" in source
    assert "_u.unpack_opaque(1024)" in source and "_u.unpack_opaque(65535)" in source
    assert "data: bytes | memoryview" in source


def test_small_data_and_mutable_records_give_bytes(views):
    small = views.chunk(addr=1, data=b"tiny", small=b"", capped=b"")
    assert type(views.unpack_chunk(views.pack_chunk(small)).data) is bytes
    record = bytearray(views.pack_chunk(_chunk(views)))
    value = views.unpack_chunk(record)
    assert type(value.data) is bytes
    record.clear()                       # nothing exported into it: it can still be resized
    assert value == _chunk(views)


def test_reading_from_an_unpacker_at_an_offset_gives_a_view(views):
    """The RPC server decodes arguments with Unpacker(record, offset) and the U_T entry point."""
    p = Packer()
    p.pack_uint(0xABCD)
    views._P_chunk(p, _chunk(views))
    record = p.get_buffer()
    u = Unpacker(record, 4)
    value = views._U_chunk(u)
    u.done()
    assert isinstance(value.data, memoryview) and value.data.obj is record
    assert value == _chunk(views)


def test_view_outlives_every_other_reference_to_the_record(views):
    value = views.unpack_chunk(memoryview(views.pack_chunk(_chunk(views)))[0:])
    gc.collect()
    assert isinstance(value.data, memoryview)
    assert value == _chunk(views)
