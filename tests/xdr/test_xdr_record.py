"""Packer.get_record: everything packed as one marked record, in one bytes object."""
from __future__ import annotations

import struct

import pytest

from cricket.xdr.errors import XdrLengthError


def test_the_placeholder_becomes_the_last_fragment_mark(xdr):
    p = xdr.Packer()
    p.pack_uint(0)                  # placeholder
    p.pack_int(-3)
    p.pack_opaque(b"hello")
    record = p.get_record()
    assert type(record) is bytes
    assert record[:4] == struct.pack(">I", 0x80000000 | (len(record) - 4))
    assert record[4:] == p.get_buffer()[4:]


def test_large_uncopied_opaques_are_included(xdr):
    big = bytes(range(256)) * 100   # above the zero-copy threshold: a segment of its own
    p = xdr.Packer()
    p.pack_uint(0)
    p.pack_opaque(big)
    p.pack_int(7)
    assert any(isinstance(b, memoryview) for b in p.get_buffers())
    record = p.get_record()
    assert len(record) == 4 + 4 + len(big) + 4
    assert struct.unpack_from(">II", record) == (0x80000000 | (len(record) - 4), len(big))
    assert record[8:8 + len(big)] == big and record[-4:] == struct.pack(">i", 7)


def test_a_record_without_room_for_its_mark_is_refused(xdr):
    with pytest.raises(XdrLengthError):
        xdr.Packer().get_record()
