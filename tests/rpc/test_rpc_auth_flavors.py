"""The flavor interface: a flavor defined outside the runtime (a shared-token flavor here) plugs
into both ends: its credential is checked by the server, what it returns reaches the handler, its
reply verifier is checked by the client."""
from __future__ import annotations

import asyncio
import hmac

import pytest

from cricket.rpc import (AsyncClient, Authenticator, AuthError, AuthStat, Client, ClientAuth,
                         Server, ServerThread, current_call, new_event_loop)
from cricket.rpc.auth import default_authenticators
from rpc_calc import CALC_PROG, CalcV1

TOKEN_FLAVOR = 390_001        # an unassigned flavor number, for the test


class TokenAuth(ClientAuth):
    flavor = TOKEN_FLAVOR

    def __init__(self, token: bytes, expect_verifier: bytes | None = None) -> None:
        self.token = token
        self.expect = expect_verifier if expect_verifier is not None else b"ok:" + token

    def credential(self) -> bytes:
        return self.token

    def check_verifier(self, flavor: int, body: bytes) -> None:
        if flavor != TOKEN_FLAVOR or not hmac.compare_digest(body, self.expect):
            raise AuthError(AuthStat.AUTH_INVALIDRESP, "the server's verifier does not match")


class TokenAuthenticator(Authenticator):
    flavor = TOKEN_FLAVOR

    def __init__(self, tokens: set[bytes]) -> None:
        self.tokens = tokens

    def authenticate(self, cred_body, verf_flavor, verf_body):
        if cred_body not in self.tokens:
            raise AuthError(AuthStat.AUTH_BADCRED, "unknown token")
        return {"token": cred_body}

    def reply_verifier(self, credentials):
        return TOKEN_FLAVOR, b"ok:" + credentials["token"]


class WhoCalls(CalcV1):
    def WHOAMI(self):
        ctx = current_call()
        return ctx.cred_flavor, 0, 0, ctx.credentials["token"].decode(), ctx.connection_id


@pytest.fixture
def token_server():
    auths = {TOKEN_FLAVOR: TokenAuthenticator({b"s3cret", b"other"})}
    with ServerThread(Server([WhoCalls()], authenticators=auths)) as st:
        yield st


def test_custom_flavor_reaches_handler_and_verifier_is_checked(token_server):
    with Client(token_server.address, auth=TokenAuth(b"s3cret")) as rpc:
        res = bytes(rpc.call(CALC_PROG, 1, 5))
    assert int.from_bytes(res[:4], "big") == TOKEN_FLAVOR and b"s3cret" in res


def test_custom_flavor_rejects_unknown_token(token_server):
    with Client(token_server.address, auth=TokenAuth(b"wrong")) as rpc:
        with pytest.raises(AuthError) as err:
            rpc.null(CALC_PROG, 1)
    assert err.value.stat == AuthStat.AUTH_BADCRED


def test_client_rejects_a_reply_with_the_wrong_verifier(token_server):
    with Client(token_server.address, auth=TokenAuth(b"s3cret", expect_verifier=b"ok:other")) as rpc:
        with pytest.raises(AuthError) as err:
            rpc.null(CALC_PROG, 1)
    assert err.value.stat == AuthStat.AUTH_INVALIDRESP


def test_flavors_not_configured_on_the_server_are_rejected(token_server):
    with Client(token_server.address) as rpc:       # AUTH_NONE, which this server does not take
        with pytest.raises(AuthError) as err:
            rpc.null(CALC_PROG, 1)
    assert err.value.stat == AuthStat.AUTH_REJECTEDCRED


def test_asyncio_client_checks_verifiers_too(token_server):
    async def main():
        async with await AsyncClient.connect(token_server.address,
                                             auth=TokenAuth(b"other", b"ok:bad")) as rpc:
            with pytest.raises(AuthError):
                await rpc.call(CALC_PROG, 1, 0)
    loop = new_event_loop()
    try:
        loop.run_until_complete(asyncio.wait_for(main(), 30))
    finally:
        loop.close()


def test_default_flavors_are_none_and_sys():
    assert sorted(default_authenticators()) == [0, 1]
