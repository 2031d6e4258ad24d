"""Record marking: both the Cython module and its pure-Python twin, on the same inputs."""
from __future__ import annotations

import pytest

from record_impls import record_impls
from hypothesis import given, settings
from hypothesis import strategies as st

from cricket.rpc.errors import RecordTooLarge


def _wire(rec, records, max_fragment=0x7FFFFFFF):
    return b"".join(bytes(b) for r in records for b in rec.frame([r], max_fragment))


def test_one_chunk_with_several_records_yields_them_in_order(rec):
    data = _wire(rec, [b"abcd", b"", b"x" * 100])
    assert rec.RecordReader().feed(data) == [b"abcd", b"", b"x" * 100]


def test_multi_fragment_record_is_reassembled(rec):
    payload = bytes(range(256)) * 10
    wire = _wire(rec, [payload], max_fragment=16)
    assert len(wire) == len(payload) + 4 * ((len(payload) + 15) // 16)
    assert rec.RecordReader().feed(wire) == [payload]


def test_frame_marks_only_the_last_fragment(rec):
    parts = rec.frame([b"a" * 10, memoryview(b"b" * 7)], max_fragment=8)
    headers = [bytes(p) for p in parts if len(p) == 4 and bytes(p)[0] in (0, 0x80)]
    assert [int.from_bytes(h, "big") for h in headers] == [8, 8, 0x80000001]


@settings(max_examples=60, deadline=None)
@given(records=st.lists(st.binary(max_size=300), max_size=6),
       frag=st.integers(1, 64), cuts=st.lists(st.integers(0, 2000), max_size=20))
def test_any_chunking_gives_the_same_records(records, frag, cuts):
    for rec in record_impls():
        wire = _wire(rec, records, frag)
        points = sorted({c % (len(wire) + 1) for c in cuts} | {0, len(wire)})
        reader = rec.RecordReader()
        got = []
        for a, b in zip(points, points[1:]):
            got += reader.feed(wire[a:b])
        assert got == records
        assert not reader.in_record


def test_byte_by_byte_feed_tracks_partial_record(rec):
    wire = _wire(rec, [b"hello world!"], max_fragment=5)
    reader = rec.RecordReader()
    got = []
    for i in range(len(wire) - 1):
        got += reader.feed(wire[i:i + 1])
        assert reader.in_record
    got += reader.feed(wire[-1:])
    assert got == [b"hello world!"] and not reader.in_record


def test_oversized_fragment_header_is_refused_before_its_data_arrives(rec):
    reader = rec.RecordReader(max_record_size=1000)
    with pytest.raises(RecordTooLarge) as err:
        reader.feed(rec.mark(1001))        # only the header: nothing buffered yet
    assert err.value.limit == 1000 and err.value.size == 1001
    assert "maximum of 1000" in str(err.value)


def test_record_limit_counts_all_fragments(rec):
    reader = rec.RecordReader(max_record_size=100)
    assert reader.feed(rec.mark(60, last=False) + b"x" * 60) == []
    with pytest.raises(RecordTooLarge):
        reader.feed(rec.mark(41, last=True))


def test_record_exactly_at_limit_is_accepted(rec):
    reader = rec.RecordReader(max_record_size=100)
    assert reader.feed(rec.mark(100) + b"y" * 100) == [b"y" * 100]


def test_mark_rejects_lengths_outside_31_bits(rec):
    with pytest.raises(ValueError):
        rec.mark(-1)
    with pytest.raises(ValueError):
        rec.mark(0x80000000)
    assert rec.mark(0x7FFFFFFF, last=False) == b"\x7f\xff\xff\xff"


def test_selected_implementation_follows_environment():
    from cricket._select import pure_python_forced
    from cricket.rpc import record
    expected = "cricket.rpc._record" if pure_python_forced() else "cricket._cext.record"
    assert record.IMPLEMENTATION == expected


def test_large_record_is_received_in_place_through_the_writable_window(rec):
    payload = bytes(range(256)) * 4096                 # 1 MiB, one fragment
    wire = _wire(rec, [payload, b"next"])
    reader = rec.RecordReader()
    assert reader.writable() is None                  # nothing open before a header arrives
    assert reader.feed(wire[:1000]) == []
    got, pos = [], 1000
    while (window := reader.writable()) is not None:
        assert len(window) == len(payload) + 4 - pos  # exactly the rest of the record, no header
        take = min(len(window), 300_000)
        window[:take] = wire[pos:pos + take]
        pos += take
        got += reader.advance(take)
    assert got == [payload] and not reader.in_record
    assert reader.feed(wire[pos:]) == [b"next"]


def test_record_filled_in_place_can_still_be_fed_as_chunks(rec):
    payload = b"\x5a" * 100_000
    wire = _wire(rec, [payload])
    reader = rec.RecordReader()
    out = reader.feed(wire[:10])
    window = reader.writable()
    window[:50] = wire[10:60]
    out += reader.advance(50)
    out += reader.feed(wire[60:])
    assert out == [payload] and reader.writable() is None


def test_advance_past_the_open_window_is_refused(rec):
    reader = rec.RecordReader()
    reader.feed(rec.mark(10) + b"abc")
    assert len(reader.writable()) == 7
    with pytest.raises(ValueError, match="7 bytes"):
        reader.advance(8)
    with pytest.raises(ValueError):
        rec.RecordReader().advance(1)


def test_window_keeps_its_record_alive_after_the_reader_is_gone(rec):
    reader = rec.RecordReader()
    reader.feed(rec.mark(8) + b"ab")
    window = reader.writable()
    del reader
    window[:] = b"cdefgh"                             # no crash, no write into freed memory
    assert bytes(window) == b"cdefgh"


def test_record_limit_can_change_between_records(rec):
    reader = rec.RecordReader(max_record_size=10)
    reader.max_record_size = 100           # e.g. once the connection authenticated
    assert reader.feed(rec.mark(50) + b"z" * 50) == [b"z" * 50]
    reader.max_record_size = 10
    with pytest.raises(RecordTooLarge):
        reader.feed(rec.mark(11))
    with pytest.raises(ValueError):
        reader.max_record_size = -1
