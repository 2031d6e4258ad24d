"""Helpers of the TLS tests: certificates made by `cricket tls-keygen`'s code, real `cricket server`
processes, a relay that records what crosses it, and the RFC 9289 probe written out by hand."""
from __future__ import annotations

import os
import socket
import struct
import threading
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]

PROGRAM, VERSION = 0x20C41C70, 1     # cricket.x; checked against cricket.protocol in a test
AUTH_NONE, AUTH_TLS = 0, 7


def probe_record(xid: int) -> bytes:
    """A NULL call with credential AUTH_TLS (empty body) and verifier AUTH_NONE, record-marked."""
    body = struct.pack(">6I4I", xid, 0, 2, PROGRAM, VERSION, 0, AUTH_TLS, 0, AUTH_NONE, 0)
    return struct.pack(">I", 0x80000000 | len(body)) + body


def null_record(xid: int) -> bytes:
    body = struct.pack(">6I4I", xid, 0, 2, PROGRAM, VERSION, 0, AUTH_NONE, 0, AUTH_NONE, 0)
    return struct.pack(">I", 0x80000000 | len(body)) + body


def read_record(sock) -> bytes:
    def exactly(n: int) -> bytes:
        data = b""
        while len(data) < n:
            got = sock.recv(n - len(data))
            assert got, "the server closed the connection"
            data += got
        return data
    head, = struct.unpack(">I", exactly(4))
    assert head & 0x80000000, "a reply of several fragments"
    return exactly(head & 0x7FFFFFFF)


def tls_env(certs: dict[str, Path], *, client_cert: bool = True, **extra: str) -> dict[str, str]:
    env = {"CRICKET_TLS": "1", "CRICKET_TLS_CA": str(certs["ca.crt"])}
    if client_cert:
        env.update(CRICKET_TLS_CERT=str(certs["client.crt"]), CRICKET_TLS_KEY=str(certs["client.key"]))
    env.update(extra)
    return env


def tls_args(certs: dict[str, Path], *, required: bool = False, mutual: bool = False) -> list[str]:
    args = ["--tls-cert", str(certs["server.crt"]), "--tls-key", str(certs["server.key"])]
    if required:
        args.append("--tls-required")
    if mutual:
        args += ["--tls-client-ca", str(certs["ca.crt"])]
    return args


class Relay:
    """A TCP relay on 127.0.0.1 to ``target``; ``seen`` holds every byte the client sent."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.seen = bytearray()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.address = "127.0.0.1:%d" % self._listener.getsockname()[1]
        self._threads: list[threading.Thread] = []
        self._socks: list[socket.socket] = []
        t = threading.Thread(target=self._accept, daemon=True)
        t.start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            self._socks += [client, upstream]
            for src, dst, record in ((client, upstream, True), (upstream, client, False)):
                t = threading.Thread(target=self._pump, args=(src, dst, record), daemon=True)
                t.start()

    def _pump(self, src: socket.socket, dst: socket.socket, record: bool) -> None:
        try:
            while data := src.recv(65536):
                if record:
                    self.seen += data
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def close(self) -> None:
        self._listener.close()
        for s in self._socks:
            s.close()


def clean_env() -> dict[str, str]:
    """The test process's environment without any CRICKET_TLS*/TOKEN setting."""
    return {k: v for k, v in os.environ.items()
            if not k.startswith(("CRICKET_TLS", "CRICKET_TOKEN", "CRICKET_INSECURE", "CRICKET_SERVER"))}
