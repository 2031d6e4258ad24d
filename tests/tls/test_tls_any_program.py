"""RPC-over-TLS is not cricket's alone: any program served by `python -m cricket.rpc serve` (here
the CALC test program of tests/rpc) gets the probe, the handshake and TLS-required refusals,
with the blocking and the asyncio client."""
from __future__ import annotations

import asyncio
import struct
import sys

import pytest

from cricket.rpc import AsyncClient, AuthError, AuthStat, Client
from cricket.rpc.tls import ClientTls, client_context
from tls_support import REPO

sys.path.insert(0, str(REPO / "tests" / "rpc"))
from rpc_calc import CALC_PROG  # noqa: E402
from rpc_peers import ServerProcess  # noqa: E402

ADD = 1
WHOAMI = 5


@pytest.fixture
def calc_tls(certs):
    server = ServerProcess("rpc_calc:CalcV1", extra=("--tls-cert", str(certs["server.crt"]), "--tls-key",
                                                      str(certs["server.key"]), "--tls-required"))
    yield server
    server.stop()


def _tls(certs) -> ClientTls:
    return ClientTls(client_context(str(certs["ca.crt"])), prog=CALC_PROG, vers=1)


def test_blocking_client_adds_over_tls_and_plain_is_refused(calc_tls, certs):
    with Client(calc_tls.address, tls=_tls(certs)) as rpc:
        assert struct.unpack(">i", rpc.call(CALC_PROG, 1, ADD, [struct.pack(">ii", 40, 2)]))[0] == 42
    with Client(calc_tls.address) as rpc:
        with pytest.raises(AuthError) as info:
            rpc.call(CALC_PROG, 1, ADD, [struct.pack(">ii", 40, 2)])
    assert info.value.stat == AuthStat.AUTH_TOOWEAK


def test_asyncio_client_adds_over_tls(calc_tls, certs):
    async def add() -> int:
        rpc = await AsyncClient.connect(calc_tls.address, tls=_tls(certs))
        try:
            return struct.unpack(">i", await rpc.call(CALC_PROG, 1, ADD, [struct.pack(">ii", -5, 7)]))[0]
        finally:
            await rpc.close()
    assert asyncio.run(add()) == 2


def test_a_probe_for_a_program_not_served_still_sets_up_tls(calc_tls, certs):
    """The NULL after the handshake then gets PROG_UNAVAIL, inside TLS: the session stands."""
    with Client(calc_tls.address, tls=ClientTls(client_context(str(certs["ca.crt"])))) as rpc:
        assert rpc.encrypted
        assert struct.unpack(">i", rpc.call(CALC_PROG, 1, ADD, [struct.pack(">ii", 1, 1)]))[0] == 2


def test_handlers_see_the_client_certificate_subject(certs, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(REPO / "tests" / "tls"))
    server = ServerProcess("tls_calc:TlsCalc", extra=(
        "--tls-cert", str(certs["server.crt"]), "--tls-key", str(certs["server.key"]), "--tls-required",
        "--tls-client-ca", str(certs["ca.crt"])))
    try:
        context = client_context(str(certs["ca.crt"]), str(certs["client.crt"]), str(certs["client.key"]))
        with Client(server.address, tls=ClientTls(context, prog=CALC_PROG, vers=1)) as rpc:
            reply = bytes(rpc.call(CALC_PROG, 1, WHOAMI))
    finally:
        server.stop()
    size, = struct.unpack_from(">I", reply, 12)
    assert reply[16:16 + size].decode() == "O=cricket,CN=cricket-client"
