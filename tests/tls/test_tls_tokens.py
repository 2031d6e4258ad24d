"""Tokens: never readable on the wire with TLS, never sent in clear to another host, and wrong
ones logged, slowed down per peer and cut off after a few; real `cricket server` processes."""
from __future__ import annotations

import re
import socket
import subprocess
import sys
import time

import pytest

from cricket.client.api import CudaError, connect
from cricket.protocol import SyncClient
from cricket.protocol import gen as P
from cricket.rpc import Client
from cricket.rpc.errors import RpcConnectionError, TlsError
from tls_support import REPO, Relay, clean_env, tls_args, tls_env

TOKEN = "sekrit-token-0123456789"


def _use(monkeypatch, env: dict[str, str]) -> None:
    for k in ("CRICKET_TLS", "CRICKET_TLS_CA", "CRICKET_TLS_CERT", "CRICKET_TLS_KEY", "CRICKET_INSECURE"):
        monkeypatch.delenv(k, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)


def test_a_relay_in_the_middle_sees_the_token_in_clear_but_not_inside_tls(start_server, certs,
                                                                          monkeypatch):
    server = start_server("--token", TOKEN, *tls_args(certs))
    relay = Relay((server.host, server.port))
    try:
        _use(monkeypatch, {})
        with connect(relay.address, token=TOKEN) as conn:       # plain: the relay reads it
            conn.ping()
        assert TOKEN.encode() in relay.seen
        relay.seen.clear()
        _use(monkeypatch, tls_env(certs, client_cert=False, CRICKET_TLS_SERVER_NAME="localhost"))
        with connect(relay.address, token=TOKEN) as conn:
            buf = conn.to_device(b"device bytes " * 100)
            conn.ping()
        assert len(relay.seen) > 1000                             # the session crossed the relay
        assert TOKEN.encode() not in relay.seen
        assert b"device bytes" not in relay.seen
    finally:
        relay.close()


def _non_loopback_ip() -> str | None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))                 # no packet is sent; picks the route's address
            ip = s.getsockname()[0]
        except OSError:
            return None
    return None if ip.startswith("127.") else ip


def test_client_refuses_to_send_a_token_in_clear_to_another_host(start_server, monkeypatch):
    ip = _non_loopback_ip()
    if ip is None:
        pytest.skip("this machine has no non-loopback IPv4 address")
    server = start_server("--token", TOKEN, "--listen", f"{ip}:0")
    _use(monkeypatch, {})
    with pytest.raises(TlsError, match="refusing to send the token in clear.*CRICKET_TLS=1"):
        connect(server.address, token=TOKEN)
    _use(monkeypatch, {"CRICKET_INSECURE": "1"})
    with connect(server.address, token=TOKEN) as conn:
        conn.ping()


def test_wrong_tokens_are_logged_slowed_down_and_cut_off(start_server, monkeypatch):
    server = start_server("--token", TOKEN)
    _use(monkeypatch, {})
    answered = 0
    with Client(server.address, timeout=60) as rpc:              # one connection, guess after guess
        stub = SyncClient(rpc)
        with pytest.raises(RpcConnectionError):
            for _ in range(5):
                res = stub.CR_HELLO(P.cr_hello_args(protocol=P.CRICKET_PROTOCOL, client="guesser",
                                                    token=f"guess-{answered}", backend=""))
                assert res.status != 0
                answered += 1
    assert answered == 3                     # the third refusal came with the connection closed
    lines = [line for line in server.output().splitlines() if "authentication failed" in line]
    assert len(lines) == 3
    assert all("127.0.0.1" in line and re.search(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", line)
               for line in lines)
    delays = [float(re.search(r"answering after ([\d.]+) s", line).group(1)) for line in lines]
    assert delays[0] < delays[1] < delays[2]                      # the back-off grows
    assert "closing the connection" in lines[2]
    with pytest.raises(CudaError):                               # a new connection, same peer:
        connect(server.address, token="guess-again")             # the count carries over
    assert "4 in a row from this host" in server.output()
    with connect(server.address, token=TOKEN) as conn:           # the right token still works
        conn.ping()


def test_non_loopback_listen_without_authentication_refuses_to_start(certs):
    base = [sys.executable, "-m", "cricket", "server", "--backend", "emu", "--listen", "0.0.0.0:0"]
    env = {**clean_env(), "PYTHONPATH": str(REPO)}
    r = subprocess.run(base, capture_output=True, text=True, timeout=60, env=env, cwd=REPO)
    assert r.returncode == 1
    message = r.stderr.strip().splitlines()[-1]
    assert message.startswith("cricket server: refusing to listen on 0.0.0.0:0 with no authentication")
    assert "--token" in message and "--insecure" in message
    # TLS offered, but plain clients still welcome and no token: still refused
    r = subprocess.run([*base, *tls_args(certs)], capture_output=True, text=True, timeout=60, env=env, cwd=REPO)
    assert r.returncode == 1 and "refusing to listen" in r.stderr


def test_wrong_tokens_over_a_unix_socket_are_cut_off_without_slowing_other_local_users(tmp_path):
    path = tmp_path / "s.sock"
    ready = tmp_path / "ready"
    log = tmp_path / "server.log"
    proc = subprocess.Popen([sys.executable, "-m", "cricket", "server", "--unix", str(path), "--backend", "emu",
                             "--token", TOKEN, "--ready-file", str(ready)], cwd=REPO,
                            stdout=open(log, "wb"), stderr=subprocess.STDOUT,
                            env={**clean_env(), "PYTHONPATH": str(REPO), "CRICKET_LOG": "info"})
    try:
        deadline = time.monotonic() + 60
        while not ready.exists():
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        for _ in range(3):
            with pytest.raises(CudaError):
                connect(str(path), token="wrong")
        with connect(str(path), token=TOKEN) as conn:
            conn.ping()
    finally:
        proc.terminate()
        proc.wait(10)
    lines = [line for line in log.read_text().splitlines() if "authentication failed" in line]
    assert len(lines) == 3 and all("unix socket" in line for line in lines)
    assert all("answering after 0.00 s" in line for line in lines)
