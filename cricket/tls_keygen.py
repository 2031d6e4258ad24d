"""Make certificates for a first try of RPC-over-TLS: a self-signed CA, a server certificate and a
client certificate, all signed by that CA (P-256 keys, made by the `openssl` command).

Writes DIR/ca.crt (give it to clients as CRICKET_TLS_CA and to the server as --tls-client-ca),
DIR/server.crt + server.key (--tls-cert, --tls-key), DIR/client.crt + client.key
(CRICKET_TLS_CERT, CRICKET_TLS_KEY). The CA's key stays in DIR/ca.key: keep it private.

examples:
  cricket tls-keygen ./certs --name gpu1.example.org --name 10.0.0.5
  cricket server --listen 0.0.0.0:7391 --tls-cert certs/server.crt --tls-key certs/server.key \\
                 --tls-required --tls-client-ca certs/ca.crt
  CRICKET_TLS=1 CRICKET_TLS_CA=certs/ca.crt CRICKET_TLS_CERT=certs/client.crt \\
      CRICKET_TLS_KEY=certs/client.key cricket run --server gpu1.example.org:7391 -- ./app
"""
from __future__ import annotations

import argparse
import ipaddress
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

log = logging.getLogger(__name__)

DEFAULT_DAYS = 365
_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]


class KeygenError(Exception):
    """The certificates could not be made; the message says why."""


def _openssl(*args: str, cwd: Path) -> None:
    r = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True)
    if r.returncode != 0:
        raise KeygenError(f"openssl {args[0]} failed: {r.stderr.strip() or r.stdout.strip()}")


def _alt_names(names: list[str]) -> str:
    out = []
    for name in names:
        try:
            ipaddress.ip_address(name)
            out.append(f"IP:{name}")
        except ValueError:
            out.append(f"DNS:{name}")
    return ",".join(out)


def _sign(directory: Path, stem: str, subject: str, extensions: list[str], days: int) -> None:
    _openssl("req", *_KEY, "-keyout", f"{stem}.key", "-out", f"{stem}.csr", "-subj", subject,
             cwd=directory)
    ext = directory / f"{stem}.ext"
    ext.write_text("\n".join([*extensions, "subjectKeyIdentifier=hash",
                              "authorityKeyIdentifier=keyid"]) + "\n")
    _openssl("x509", "-req", "-in", f"{stem}.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
             "-CAcreateserial", "-out", f"{stem}.crt", "-days", str(days), "-extfile", ext.name,
             cwd=directory)
    (directory / f"{stem}.csr").unlink()
    ext.unlink()
    os.chmod(directory / f"{stem}.key", 0o600)


def make_certificates(directory: str | os.PathLike, names: list[str] | None = None,
                      client: str = "cricket-client", days: int = DEFAULT_DAYS) -> dict[str, Path]:
    """Make the CA, server and client files in ``directory``; the server certificate is valid for
    ``names`` (default localhost and 127.0.0.1). Returns their paths by name."""
    if shutil.which("openssl") is None:
        raise KeygenError("the openssl command is not installed; install it (apt-get install openssl)")
    names = names or ["localhost", "127.0.0.1"]
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    _openssl("req", "-x509", *_KEY, "-keyout", "ca.key", "-out", "ca.crt", "-days", str(days),
             "-subj", "/O=cricket/CN=cricket CA", "-addext", "basicConstraints=critical,CA:TRUE",
             "-addext", "keyUsage=critical,keyCertSign,cRLSign", cwd=out)
    os.chmod(out / "ca.key", 0o600)
    _sign(out, "server", f"/O=cricket/CN={names[0]}",
          [f"subjectAltName={_alt_names(names)}", "extendedKeyUsage=serverAuth",
           "basicConstraints=critical,CA:FALSE"], days)
    _sign(out, "client", f"/O=cricket/CN={client}",
          ["extendedKeyUsage=clientAuth", "basicConstraints=critical,CA:FALSE"], days)
    (out / "ca.srl").unlink(missing_ok=True)
    return {stem: out / stem for stem in
            ("ca.crt", "ca.key", "server.crt", "server.key", "client.crt", "client.key")}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("directory", metavar="DIR", help="where to write the files (made if missing)")
    parser.add_argument("--name", action="append", default=[], metavar="HOST",
                        help="a host name or IP address the server certificate is for (repeatable; "
                             "default localhost and 127.0.0.1)")
    parser.add_argument("--client", default="cricket-client", metavar="CN",
                        help="the common name of the client certificate (the session identity the "
                             "server logs; default cricket-client)")
    parser.add_argument("--days", type=int, default=DEFAULT_DAYS, help=f"validity (default {DEFAULT_DAYS})")


def main(args: argparse.Namespace) -> int:
    try:
        files = make_certificates(args.directory, args.name, args.client, args.days)
    except (KeygenError, OSError) as exc:
        print(f"cricket tls-keygen: {exc}", file=sys.stderr)
        return 1
    for name, path in files.items():
        print(f"{name:<11} {path}")
    return 0
