"""Large opaques go to the transport uncopied, and decode as views of the input."""
from __future__ import annotations


def test_large_opaque_is_a_segment_sharing_memory_with_the_input(xdr):
    payload = bytearray(b"\x5a" * (1 << 20) + b"xyz")
    p = xdr.Packer()
    p.pack_uint(7)
    p.pack_opaque(payload)
    p.pack_int(-1)
    bufs = p.get_buffers()
    views = [b for b in bufs if isinstance(b, memoryview)]
    assert len(views) == 1 and len(views[0]) == len(payload)
    payload[0] = 0x41  # the segment shares memory with the caller's buffer: no copy was made
    assert views[0][0] == 0x41
    joined = b"".join(bytes(b) for b in bufs)
    assert joined == p.get_buffer()
    assert len(joined) == len(p) == 4 + 4 + len(payload) + 1 + 4
    assert joined[:8] == b"\0\0\0\x07" + len(payload).to_bytes(4, "big")
    assert joined[-5:] == b"\0\xff\xff\xff\xff"


def test_small_opaques_stay_in_one_buffer(xdr):
    p = xdr.Packer()
    p.pack_opaque(b"abc")
    assert p.get_buffers() == [b"\0\0\0\x03abc\0"]


def test_unpack_opaque_view_does_not_copy(xdr):
    data = bytearray(b"\0\0\0\x05hello\0\0\0")
    u = xdr.Unpacker(data)
    view = u.unpack_opaque_view()
    assert isinstance(view, memoryview) and bytes(view) == b"hello"
    data[4] = ord("j")
    assert bytes(view) == b"jello"
    u.done()


def test_unpacker_accepts_memoryview_and_offset(xdr):
    blob = memoryview(b"junk\0\0\0\x09\0\0\0\x01")
    u = xdr.Unpacker(blob, 4)
    assert u.position == 4
    assert u.unpack_int() == 9
    assert u.remaining() == 4
    u.position = 8
    assert u.unpack_uint() == 1
    assert u.remaining() == 0
