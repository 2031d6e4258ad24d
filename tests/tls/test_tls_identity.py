"""Mutual TLS, and the errors a user gets for a wrong CA, a wrong server name or a missing or
foreign client certificate, against real `cricket server` processes."""
from __future__ import annotations

import pytest

from cricket.client.api import connect
from cricket.rpc.errors import TlsError
from tls_support import tls_args, tls_env


def _use(monkeypatch, env: dict[str, str]) -> None:
    for k in ("CRICKET_TLS_CERT", "CRICKET_TLS_KEY", "CRICKET_TLS_SERVER_NAME"):
        monkeypatch.delenv(k, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)


def test_mutual_tls_accepts_the_right_client_and_logs_its_subject(start_server, certs, monkeypatch):
    server = start_server(*tls_args(certs, required=True, mutual=True))
    _use(monkeypatch, tls_env(certs))
    with connect(server.address) as conn:
        session = conn.session_id
        conn.ping()
    out = server.output()
    assert "client certificate O=cricket,CN=cricket-client" in out
    assert f"session {session}: TLS client certificate O=cricket,CN=cricket-client" in out


def test_mutual_tls_refuses_a_client_without_a_certificate(start_server, certs, monkeypatch):
    server = start_server(*tls_args(certs, required=True, mutual=True))
    _use(monkeypatch, tls_env(certs, client_cert=False))
    with pytest.raises(TlsError, match="CRICKET_TLS_CERT"):
        with connect(server.address) as conn:
            conn.ping()


def test_mutual_tls_refuses_a_certificate_of_another_ca(start_server, certs, other_certs, monkeypatch):
    server = start_server(*tls_args(certs, required=True, mutual=True))
    _use(monkeypatch, tls_env(certs, CRICKET_TLS_CERT=str(other_certs["client.crt"]),
                              CRICKET_TLS_KEY=str(other_certs["client.key"])))
    with pytest.raises(TlsError):
        with connect(server.address) as conn:
            conn.ping()
    assert "CN=intruder" not in server.output()


def test_a_server_certificate_of_another_ca_is_refused_clearly(start_server, certs, other_certs,
                                                                monkeypatch):
    server = start_server(*tls_args(certs, required=True))
    _use(monkeypatch, tls_env(other_certs, client_cert=False))
    with pytest.raises(TlsError, match="certificate was refused.*CRICKET_TLS_CA"):
        connect(server.address)


def test_a_server_certificate_for_another_name_is_refused_clearly(start_server, certs, monkeypatch):
    server = start_server(*tls_args(certs, required=True))
    _use(monkeypatch, tls_env(certs, client_cert=False, CRICKET_TLS_SERVER_NAME="gpu.example.org"))
    with pytest.raises(TlsError, match="for another name"):
        connect(server.address)


def test_asyncio_client_refuses_a_server_of_another_ca_clearly(start_server, certs, other_certs,
                                                               monkeypatch):
    import asyncio

    from cricket.client import aio
    server = start_server(*tls_args(certs, required=True))
    _use(monkeypatch, tls_env(other_certs, client_cert=False))
    with pytest.raises(TlsError, match="certificate was refused.*CRICKET_TLS_CA"):
        asyncio.run(aio.connect(server.address))


def test_status_probe_counts_a_tls_required_server_as_answering(start_server, certs):
    """A Kubernetes probe (`cricket status --probe`) of a server that requires mutual TLS: the
    server answers the plain NULL call with AUTH_ERROR, which is an answer."""
    import subprocess
    import sys
    server = start_server(*tls_args(certs, required=True, mutual=True))
    probe = subprocess.run([sys.executable, "-m", "cricket", "status", "--probe", "--server", server.address],
                           capture_output=True, text=True, timeout=60)
    assert probe.returncode == 0, probe.stderr
    server.stop()
    probe = subprocess.run([sys.executable, "-m", "cricket", "status", "--probe", "--server", server.address],
                           capture_output=True, text=True, timeout=60)
    assert probe.returncode == 1 and "does not answer" in probe.stderr
