"""Records from the record reader never share memory: a view into one stays valid and unchanged
while the reader goes on receiving (in place or from chunks) the records that follow."""
from __future__ import annotations

import pytest

from cricket.xdr import Unpacker


def _call_record(fill: int, n: int = 1 << 20) -> bytes:
    return b"HEAD" + n.to_bytes(4, "big") + bytes([fill]) * n


def _receive_in_place(reader, wire: bytes) -> list:
    """Feed the first bytes, then recv-like writes into ``writable()`` windows."""
    records = reader.feed(wire[:4096])
    pos = 4096
    while pos < len(wire):
        window = reader.writable()
        if window is None:
            records += reader.feed(wire[pos:pos + 4096])
            pos += 4096
            continue
        take = min(len(window), 300_000, len(wire) - pos)
        window[:take] = wire[pos:pos + take]
        records += reader.advance(take)
        pos += take
    return records


@pytest.mark.parametrize("in_place", [True, False], ids=["in-place", "chunks"])
def test_view_into_a_record_survives_the_next_records(rec, in_place):
    reader = rec.RecordReader(8 << 20)
    first = b"".join(bytes(b) for b in rec.frame([_call_record(0x11)]))
    [record] = _receive_in_place(reader, first) if in_place else reader.feed(first)
    u = Unpacker(record, 4)
    view = u.unpack_opaque_or_view()
    before = bytes(view)
    for fill in (0x22, 0x33):
        wire = b"".join(bytes(b) for b in rec.frame([_call_record(fill)]))
        got = _receive_in_place(reader, wire) if in_place else reader.feed(wire)
        assert len(got) == 1 and got[0] is not record
        assert got[0][8] == fill
    assert bytes(view) == before == b"\x11" * (1 << 20)
