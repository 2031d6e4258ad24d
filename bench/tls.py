"""RPC-over-TLS against plain TCP, in the same run: NULL round trips and copy bandwidth.

    python bench/tls.py [--quick]

One emu `cricket server` on TCP loopback offers TLS (RFC 9289, TLS 1.3); one client connection
uses it (CRICKET_TLS=1), one does not, both on the socket (no shared memory). Runs of the two
alternate so that a busy machine slows them alike. Prints a Markdown table: TLS figure, plain
figure, ratio, goal (bulk copies ≥ 0.5× of plain TCP).
"""
from __future__ import annotations

import argparse
import os
import ssl
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.config import Config, from_env  # noqa: E402
from bench.copies import _rate  # noqa: E402
from bench.report import BenchResult, Row  # noqa: E402
from bench.servers import CricketServer  # noqa: E402
from bench.stats import Sample, size_label  # noqa: E402

MIB = 1 << 20
BULK_GOAL = 0.5


def _connect_tls(address: str, certs: dict[str, Path]):
    from cricket.client.api import connect
    saved = {k: os.environ.get(k) for k in ("CRICKET_TLS", "CRICKET_TLS_CA")}
    os.environ.update(CRICKET_TLS="1", CRICKET_TLS_CA=str(certs["ca.crt"]))
    try:
        return connect(address, shared_memory=False)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def measure(cfg: Config, progress=lambda msg: None) -> BenchResult:
    from cricket.client.api import connect
    from cricket.tls_keygen import make_certificates
    result = BenchResult("tls", "RPC-over-TLS (TLS 1.3) against plain TCP, same server, same run")
    sizes = [MIB] if cfg.tiny else [MIB, 16 * MIB] if cfg.quick else [MIB, 16 * MIB, 64 * MIB]
    seconds = 0.02 if cfg.tiny else 0.1 if cfg.quick else 0.25
    with tempfile.TemporaryDirectory(prefix="cricket-bench-tls-") as tmp:
        certs = make_certificates(tmp)
        server = CricketServer("emu", "--tls-cert", str(certs["server.crt"]), "--tls-key",
                               str(certs["server.key"]))
        runs: dict[str, dict[str, list[float]]] = {"tls": {}, "plain": {}}
        try:
            with connect(server.address, shared_memory=False) as plain, \
                    _connect_tls(server.address, certs) as tls:
                cipher = tls._rpc._sock.ssl_object.cipher()
                conns = {"plain": plain, "tls": tls}
                for r in range(cfg.repeat):
                    progress(f"run {r + 1}/{cfg.repeat}")
                    for name, conn in conns.items():
                        runs[name].setdefault("null", []).append(    # 1 / calls per second
                            1 / _rate(conn.ping, 1, cfg.calls_for(0, most=2000), seconds))
                    for s in sizes:
                        data = memoryview(bytearray(b"\1" * s))
                        into = memoryview(bytearray(s))
                        n = cfg.calls_for(s, most=50)
                        for name, conn in conns.items():
                            buf = conn.alloc(s)
                            try:
                                runs[name].setdefault(f"htod {s}", []).append(
                                    _rate(lambda: conn.memcpy_htod(buf, data), s, n, seconds))
                                runs[name].setdefault(f"dtoh {s}", []).append(
                                    _rate(lambda: conn.memcpy_dtoh(buf, s, into=into), s, n, seconds))
                            finally:
                                buf.free()
        finally:
            server.stop()
    result.rows.append(Row("NULL round trip", Sample.of(runs["tls"]["null"], "s"),
                           Sample.of(runs["plain"]["null"], "s"), "plain TCP"))
    for d, label in (("htod", "host → device"), ("dtoh", "device → host")):
        for s in sizes:
            result.rows.append(Row(f"{label} {size_label(s)}", Sample.of(runs["tls"][f"{d} {s}"], "B/s"),
                                   Sample.of(runs["plain"][f"{d} {s}"], "B/s"), "plain TCP",
                                   (">=", BULK_GOAL)))
    result.notes.append(f"TLS: {cipher[1]} {cipher[0]} (OpenSSL {ssl.OPENSSL_VERSION.split()[1]}); "
                        "copies synchronous, on the socket (no shared memory), emu backend; the "
                        "blocking client encrypts and decrypts in its own thread (ssl.SSLObject over "
                        "memory buffers: one extra copy each way), the server in its event loop "
                        f"(uvloop start_tls); goal: bulk copies ≥ {BULK_GOAL}× plain TCP")
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer sizes and runs")
    args = ap.parse_args(argv)
    res = measure(from_env(args.quick), lambda m: print(m, file=sys.stderr))
    print(res.markdown())
    return 0


if __name__ == "__main__":
    sys.exit(main())
