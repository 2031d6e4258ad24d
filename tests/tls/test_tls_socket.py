"""cricket.rpc.tls_socket against the standard library's TLS server on a socket pair: short
non-blocking writes resume where they stopped, and reads return what was sent."""
from __future__ import annotations

import random
import select
import socket
import ssl
import threading

import pytest

from cricket.rpc.tls import client_context
from cricket.rpc.tls_socket import TlsSocket


def _server(sock: socket.socket, certs, received: bytearray, reply: bytes, want: int) -> None:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(certs["server.crt"], certs["server.key"])
    ctx.set_alpn_protocols(["sunrpc"])
    with ctx.wrap_socket(sock, server_side=True) as tls:
        tls.sendall(reply)
        while len(received) < want:
            received += tls.recv(1 << 16)


def test_short_nonblocking_writes_resume_without_loss(certs):
    ours, theirs = socket.socketpair()
    ours.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    rng = random.Random(9289)
    pieces = [rng.randbytes(n) for n in (40, 300_000, 7, 1_000_000)]
    want = sum(map(len, pieces))
    reply = rng.randbytes(50_000)       # fits the socket buffers: sent before anything is read
    received = bytearray()
    t = threading.Thread(target=_server, args=(theirs, certs, received, reply, want))
    t.start()
    tls = TlsSocket(ours, client_context(str(certs["ca.crt"])), "localhost", 30)
    assert tls.ssl_object.selected_alpn_protocol() == "sunrpc"
    rest = [memoryview(p) for p in pieces]
    short = 0
    while rest:                              # what the RPC client's write loop does
        n = tls.sendmsg(rest, (), socket.MSG_DONTWAIT)
        if n < sum(v.nbytes for v in rest):
            short += 1
            select.select([], [ours], [], 5)
        while n:
            take = min(n, rest[0].nbytes)
            rest[0] = rest[0][take:]
            n -= take
            if not rest[0].nbytes:
                rest.pop(0)
    got = bytearray()
    buf = bytearray(1 << 16)
    while len(got) < len(reply):
        n = tls.recv_into(buf)
        assert n > 0
        got += buf[:n]
    t.join(30)
    tls.close()
    assert short > 0                         # the small buffer did cut writes short
    assert bytes(received) == b"".join(pieces)
    assert bytes(got) == reply


def test_nothing_reaches_the_raw_socket_around_tls(certs):
    ours, theirs = socket.socketpair()
    t = threading.Thread(target=_server, args=(theirs, certs, bytearray(), b"", 0))
    t.start()
    tls = TlsSocket(ours, client_context(str(certs["ca.crt"])), "localhost", 30)
    try:
        assert tls.fileno() == ours.fileno()           # for poll, and socket options
        for name in ("send", "sendall", "recv", "recvmsg", "makefile", "sendfile"):
            assert not hasattr(tls, name), name
        with pytest.raises(OSError, match="inside TLS"):
            tls.sendmsg([b"x"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, b"\0\0\0\0")])
    finally:
        t.join(30)
        tls.close()
