"""Ask a server how it is: a NULL ping (``--probe``) or HELLO then CR_SERVER_STATUS."""
from __future__ import annotations

import os
from typing import Any

from .. import __version__
from ..protocol import PROCEDURES, PROGRAM, VERSION, SyncClient
from ..protocol import gen as P
from ..rpc import Client
from ..rpc.errors import AuthError
from ..xdr.rpcgen_support import XdrStruct

DEFAULT_SERVER = "127.0.0.1:7391"


class StatusError(Exception):
    """The server did not answer, or refused; the message says which and what to do."""


def server_address(given: str | None) -> str:
    return given or os.environ.get("CRICKET_SERVER") or DEFAULT_SERVER


def operator_token(given: str | None) -> str:
    if given is not None:
        return given
    return os.environ.get("CRICKET_ADMIN_TOKEN") or os.environ.get("CRICKET_TOKEN", "")


def probe(address: str, timeout: float) -> None:
    """Raise :class:`StatusError` unless the server answers the RPC NULL procedure in time."""
    try:
        with Client(address, timeout=timeout) as rpc:
            rpc.call(PROGRAM, VERSION, PROCEDURES["CR_NULL"], [b""])
    except AuthError:            # a server that wants TLS (or credentials) first: it answered
        return
    except ValueError as exc:
        raise StatusError(str(exc)) from None
    except Exception as exc:     # refused, reset, timed out: the probe's answer is "no"
        raise StatusError(f"{address} does not answer: {exc}") from None


class StatusClient:
    """A session that asks for the server's status, as often as wanted."""

    def __init__(self, address: str, token: str, timeout: float) -> None:
        try:
            self._rpc = Client(address, timeout=timeout)
        except ValueError as exc:
            raise StatusError(str(exc)) from None
        except Exception as exc:
            raise StatusError(f"cannot reach a cricket server at {address}: {exc}; start one "
                              "(`cricket server`) or name it with --server or CRICKET_SERVER") from None
        self._stub = SyncClient(self._rpc)
        res = self._ask(self._stub.CR_HELLO, P.cr_hello_args(
            protocol=P.CRICKET_PROTOCOL, client=f"cricket status {__version__} pid {os.getpid()}",
            token=token, backend=""))
        if res.status != 0:
            self.close()
            raise StatusError(f"the server refused HELLO: {res.message}")

    def _ask(self, call: Any, *args: Any) -> Any:
        try:
            return call(*args)
        except Exception as exc:
            raise StatusError(f"the server stopped answering: {exc}") from None

    def status(self) -> dict[str, Any]:
        res = self._ask(self._stub.CR_SERVER_STATUS)
        if res.status != 0:
            raise StatusError(f"the server refused its status: {res.message}")
        return as_plain(res.server)

    def close(self) -> None:
        self._rpc.close()

    def __enter__(self) -> StatusClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def as_plain(value: Any) -> Any:
    """A generated XDR value as dicts, lists and scalars (for ``--json`` and the report)."""
    if isinstance(value, XdrStruct):
        return {name: as_plain(getattr(value, name)) for name in type(value).__slots__}
    if isinstance(value, (list, tuple)):
        return [as_plain(v) for v in value]
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("utf-8", "replace")
    return value
