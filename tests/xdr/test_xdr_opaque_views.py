"""Unpacker.unpack_opaque_or_view: large opaques of immutable input decode as read-only views."""
from __future__ import annotations

import gc

import pytest


def _opaque(payload: bytes, before: bytes = b"") -> bytes:
    n = len(payload)
    return before + n.to_bytes(4, "big") + payload + b"\0" * (-n % 4)


def test_large_opaque_of_bytes_is_a_read_only_view_sharing_the_input(xdr):
    payload = bytes(range(256)) * (xdr.VIEW_MIN // 256 + 1)
    record = _opaque(payload, b"\0\0\0\x07")
    u = xdr.Unpacker(record)
    assert u.unpack_uint() == 7
    value = u.unpack_opaque_or_view()
    u.done()
    assert isinstance(value, memoryview) and value.readonly
    assert value.obj is record             # no copy: the view is into the record itself
    assert value == payload and len(value) == len(payload)


def test_threshold_is_view_min(xdr):
    below = xdr.Unpacker(_opaque(b"a" * (xdr.VIEW_MIN - 1))).unpack_opaque_or_view()
    at = xdr.Unpacker(_opaque(b"a" * xdr.VIEW_MIN)).unpack_opaque_or_view()
    assert type(below) is bytes and below == b"a" * (xdr.VIEW_MIN - 1)
    assert isinstance(at, memoryview) and len(at) == xdr.VIEW_MIN


def test_mutable_input_gives_a_copy_and_stays_resizable(xdr):
    record = bytearray(_opaque(b"q" * (2 * xdr.VIEW_MIN)))
    value = xdr.Unpacker(record).unpack_opaque_or_view()
    assert type(value) is bytes
    record[4:8] = b"ZZZZ"
    record.extend(b"more")      # no exported view is left behind: no BufferError
    del record[:]
    assert value == b"q" * (2 * xdr.VIEW_MIN)


def test_read_only_view_of_a_bytearray_is_not_taken_for_immutable(xdr):
    backing = bytearray(_opaque(b"r" * xdr.VIEW_MIN))
    value = xdr.Unpacker(memoryview(backing).toreadonly()).unpack_opaque_or_view()
    assert type(value) is bytes
    assert not xdr.immutable_input(memoryview(backing).toreadonly())


def test_memoryview_slice_of_bytes_gives_a_view_at_the_right_offset(xdr):
    payload = b"s" * xdr.VIEW_MIN + b"end"
    record = b"HEADHEAD" + _opaque(payload)
    window = memoryview(record)[8:]     # how RPC clients hand over a reply's results
    value = xdr.Unpacker(window).unpack_opaque_or_view()
    assert isinstance(value, memoryview) and value.obj is record
    assert bytes(value[-3:]) == b"end" and value == payload


def test_view_keeps_the_record_alive(xdr):
    payload = b"k" * xdr.VIEW_MIN
    value = xdr.Unpacker(_opaque(payload)).unpack_opaque_or_view()
    gc.collect()
    assert value == payload


@pytest.mark.parametrize("data,error", [
    (b"\0\0\0\x10" + b"x" * 8, "XdrTruncatedError"),
    (b"\0\1\0\0" + b"x" * 65536, "XdrLengthError"),
])
def test_bad_lengths_are_rejected_before_any_view(xdr, data, error):
    from cricket.xdr import errors
    with pytest.raises(getattr(errors, error)):
        xdr.Unpacker(data).unpack_opaque_or_view(65535 if error == "XdrLengthError" else None)


def test_both_implementations_agree_on_view_min():
    import importlib
    from cricket.xdr import _pure
    from rpcgen.model import OPAQUE_VIEW_MIN
    assert _pure.VIEW_MIN == OPAQUE_VIEW_MIN
    try:
        cy = importlib.import_module("cricket._cext.xdr")
    except ImportError:
        return
    assert cy.VIEW_MIN == OPAQUE_VIEW_MIN
