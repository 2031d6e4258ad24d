"""RFC 9289 against a real `cricket server`: the AUTH_TLS probe, the STARTTLS verifier and a TLS
1.3 handshake on the same connection, checked with Python's ssl module directly; then cricket's
own blocking and asyncio clients."""
from __future__ import annotations

import asyncio
import socket
import ssl
import struct

import pytest

from cricket.client import aio
from cricket.client.api import connect
from cricket.protocol import PROGRAM, VERSION
from cricket.rpc import AuthError, AuthStat
from cricket.rpc.errors import TlsError
from tls_support import (PROGRAM as WRITTEN_PROGRAM, VERSION as WRITTEN_VERSION, clean_env,
                         null_record, probe_record, read_record, tls_args, tls_env)


def test_hand_written_probe_names_cricket_program():
    assert (WRITTEN_PROGRAM, WRITTEN_VERSION) == (PROGRAM, VERSION)


def _stdlib_context(certs) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=str(certs["ca.crt"]))
    ctx.set_alpn_protocols(["sunrpc"])
    return ctx


def test_probe_gets_starttls_then_tls13_with_alpn_sunrpc(shared_server, certs):
    server = shared_server(*tls_args(certs))
    with socket.create_connection((server.host, server.port), timeout=30) as sock:
        sock.sendall(probe_record(0x1234))
        reply = read_record(sock)
        # xid, REPLY, MSG_ACCEPTED, verifier AUTH_NONE with the 8 bytes "STARTTLS", SUCCESS
        assert reply == struct.pack(">5I", 0x1234, 1, 0, 0, 8) + b"STARTTLS" + struct.pack(">I", 0)
        with _stdlib_context(certs).wrap_socket(sock, server_hostname="localhost") as tls:
            assert tls.version() == "TLSv1.3"
            assert tls.selected_alpn_protocol() == "sunrpc"
            assert "GCM" in tls.cipher()[0] or "CHACHA20" in tls.cipher()[0]
            tls.sendall(null_record(0x5678))            # records now travel inside TLS
            assert read_record(tls) == struct.pack(">6I", 0x5678, 1, 0, 0, 0, 0)


def test_server_without_tls_answers_the_probe_with_auth_error(shared_server):
    server = shared_server()
    with socket.create_connection((server.host, server.port), timeout=30) as sock:
        sock.sendall(probe_record(7))
        xid, mtype, stat, reject = struct.unpack(">4I", read_record(sock)[:16])
        assert (xid, mtype, stat, reject) == (7, 1, 1, 1)        # MSG_DENIED / AUTH_ERROR


def test_client_asking_for_tls_of_a_plain_server_says_so(shared_server, certs, monkeypatch):
    server = shared_server()
    for k, v in tls_env(certs).items():
        monkeypatch.setenv(k, v)
    with pytest.raises(TlsError, match="does not offer RPC-over-TLS"):
        connect(server.address)


def test_plain_calls_are_served_when_tls_is_only_offered(shared_server, certs, monkeypatch):
    server = shared_server(*tls_args(certs))
    monkeypatch.delenv("CRICKET_TLS", raising=False)
    with connect(server.address) as conn:
        assert conn.backend == "emu"
        assert not conn._rpc.encrypted


def test_tls_required_refuses_a_plain_client_with_auth_error(shared_server, certs, monkeypatch):
    server = shared_server(*tls_args(certs, required=True))
    monkeypatch.delenv("CRICKET_TLS", raising=False)
    with pytest.raises(AuthError) as info:
        connect(server.address)
    assert info.value.stat == AuthStat.AUTH_TOOWEAK
    with socket.create_connection((server.host, server.port), timeout=30) as sock:
        sock.sendall(null_record(9))                # even NULL waits for the handshake
        assert struct.unpack(">5I", read_record(sock)[:20]) == (9, 1, 1, 1, AuthStat.AUTH_TOOWEAK)


def test_blocking_client_runs_a_session_inside_tls(shared_server, certs, monkeypatch):
    server = shared_server(*tls_args(certs, required=True))
    for k, v in tls_env(certs, client_cert=False).items():
        monkeypatch.setenv(k, v)
    data = bytes(range(256)) * 4096 + b"tail"        # more than one TLS record, odd length
    with connect(server.address) as conn:
        assert conn._rpc.encrypted
        buf = conn.to_device(data)
        assert bytes(conn.memcpy_dtoh(buf, len(data))) == data
        conn.ping()


def test_asyncio_client_runs_a_session_inside_tls(shared_server, certs, monkeypatch):
    server = shared_server(*tls_args(certs, required=True))
    for k, v in tls_env(certs, client_cert=False).items():
        monkeypatch.setenv(k, v)

    data = bytes(range(251)) * 1000

    async def session() -> None:
        conn = await aio.connect(server.address)
        try:
            assert conn._rpc.encrypted
            ptr = await conn.to_device(data)
            assert bytes(await conn.to_host(ptr, len(data))) == data
        finally:
            await conn.close()
    asyncio.run(session())
    assert "TLS TLSv1.3" in server.output()


def test_large_and_pipelined_copies_arrive_intact_inside_tls(shared_server, certs, monkeypatch):
    """Copies larger than the socket buffers, in both directions, with asynchronous copies queued
    between them (the client then writes while replies wait to be read)."""
    server = shared_server(*tls_args(certs, required=True))
    for k, v in tls_env(certs, client_cert=False).items():
        monkeypatch.setenv(k, v)
    rng = __import__("random").Random(16)
    big = rng.randbytes(24 << 20)
    with connect(server.address, shared_memory=False) as conn:
        buf = conn.alloc(len(big))
        conn.memcpy_htod(buf, big)
        parts = [rng.randbytes(1 << 20) for _ in range(6)]
        for i, part in enumerate(parts):
            conn.memcpy_htod(int(buf) + i * len(part), part, sync=False)
        expected = b"".join(parts) + big[len(parts) << 20:]
        assert bytes(conn.memcpy_dtoh(buf, len(big))) == expected
