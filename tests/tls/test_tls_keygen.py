"""`cricket tls-keygen DIR`: a CA, and server and client certificates that CA signed, for the
names asked for."""
from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from tls_support import REPO, clean_env

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="the openssl command is not installed")


def test_keygen_makes_a_ca_and_certificates_it_signed_for_the_names_given(tmp_path):
    out = tmp_path / "certs"
    r = subprocess.run([sys.executable, "-m", "cricket", "tls-keygen", str(out), "--name", "gpu1.example.org",
                        "--name", "10.1.2.3", "--client", "alice"], capture_output=True, text=True,
                       timeout=120, cwd=REPO, env={**clean_env(), "PYTHONPATH": str(REPO)})
    assert r.returncode == 0, r.stderr
    for name in ("ca.crt", "ca.key", "server.crt", "server.key", "client.crt", "client.key"):
        assert (out / name).stat().st_size > 0
        assert str(out / name) in r.stdout
    assert (out / "server.key").stat().st_mode & 0o077 == 0
    verify = subprocess.run(["openssl", "verify", "-CAfile", str(out / "ca.crt"), str(out / "server.crt"),
                             str(out / "client.crt")], capture_output=True, text=True)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    text = subprocess.run(["openssl", "x509", "-in", str(out / "server.crt"), "-noout", "-text"],
                          capture_output=True, text=True).stdout
    assert "DNS:gpu1.example.org" in text and "IP Address:10.1.2.3" in text
    subject = subprocess.run(["openssl", "x509", "-in", str(out / "client.crt"), "-noout", "-subject"],
                             capture_output=True, text=True).stdout
    assert "CN = alice" in subject
