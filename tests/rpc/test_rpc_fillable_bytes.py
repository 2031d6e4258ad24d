"""FillableBytes: receive into a new bytes object through a writable view (both implementations)."""
from __future__ import annotations

import socket
import threading

import pytest


def test_received_bytes_come_back_as_bytes(rec):
    payload = bytes(range(256)) * 4096
    a, b = socket.socketpair()
    with a, b:
        filler = rec.FillableBytes(len(payload))
        view, got = filler.view, 0
        sender = threading.Thread(target=a.sendall, args=(payload,))
        sender.start()
        while got < len(payload):
            got += b.recv_into(view[got:])
        sender.join()
        data = filler.finish()
    assert type(data) is bytes and data == payload
    assert filler.finish() is data
    with pytest.raises(ValueError, match="finish"):
        filler.view


def test_the_view_is_released_by_finish(rec):
    filler = rec.FillableBytes(64)
    view = filler.view
    view[:] = b"\x01" * 64
    assert filler.finish() == b"\x01" * 64
    with pytest.raises(ValueError):
        view[0] = 2                      # released: writing after finish is refused


def test_zero_and_negative_sizes(rec):
    assert rec.FillableBytes(0).finish() == b""
    with pytest.raises(ValueError, match="negative"):
        rec.FillableBytes(-1)
