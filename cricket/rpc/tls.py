"""RPC-over-TLS (RFC 9289) for any served program: the AUTH_TLS probe, the STARTTLS answer, and TLS
1.3 on the same TCP connection.

The client sends a NULL call whose credential is AUTH_TLS with an empty body; a server that offers
TLS answers MSG_ACCEPTED / SUCCESS with the verifier AUTH_NONE carrying the eight bytes "STARTTLS",
and both run a TLS handshake (ALPN "sunrpc", TLS 1.3 at least); every later record travels inside
TLS. A server that does not know AUTH_TLS answers AUTH_ERROR. A server may require TLS: it then
answers every other call before the handshake with AUTH_ERROR (AUTH_TOOWEAK).

Client side, :class:`ClientTls` is what :class:`~cricket.rpc.Client` and
:class:`~cricket.rpc.AsyncClient` take as ``tls=``; :func:`cricket.rpc.tls_env.client_tls` builds it from
``CRICKET_TLS``, ``CRICKET_TLS_CA``, ``CRICKET_TLS_CERT``/``CRICKET_TLS_KEY`` and
``CRICKET_TLS_SERVER_NAME``. Server side, :class:`ServerTls` is what :class:`~cricket.rpc.Server`
takes as ``tls=``; with a client CA it asks for a client certificate (mutual TLS) and the
certificate's subject becomes the connection's ``tls_identity``.
"""
from __future__ import annotations

import asyncio
import logging
import os
import socket
import ssl
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import message
from .constants import LAST_FRAGMENT, AuthFlavor, AuthStat
from .errors import AuthError, ProtocolError, ReplyError, RpcConnectionError, RpcError, TlsError
from .record import mark
from .tls_socket import TlsSocket
from .transport import is_unix

if TYPE_CHECKING:
    from .message import CallHeader

log = logging.getLogger(__name__)

ALPN = "sunrpc"                 # RFC 9289 §7.2
STARTTLS = b"STARTTLS"          # the probe reply's verifier body (RFC 9289 §4.1)
HANDSHAKE_TIMEOUT = 30.0
_MAX_PROBE_REPLY = 1024         # a probe reply is a header of a few words


# --- contexts --------------------------------------------------------------------------------------

def _tls13(ctx: ssl.SSLContext) -> ssl.SSLContext:
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    ctx.set_alpn_protocols([ALPN])
    return ctx


def server_context(cert: str, key: str, client_ca: str | None = None) -> ssl.SSLContext:
    """A server context with ``cert``/``key``; with ``client_ca`` clients must show a certificate
    that CA signed."""
    ctx = _tls13(ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER))
    ctx.load_cert_chain(cert, key)
    if client_ca:
        ctx.load_verify_locations(client_ca)
        ctx.verify_mode = ssl.CERT_REQUIRED
    return ctx


def client_context(ca: str | None = None, cert: str | None = None, key: str | None = None,
                   check_hostname: bool = True) -> ssl.SSLContext:
    """A client context trusting ``ca`` (default: the system's CAs), showing ``cert``/``key`` when
    given; the server's name is checked unless ``check_hostname=False``."""
    ctx = _tls13(ssl.create_default_context(cafile=ca) if ca else ssl.create_default_context())
    ctx.check_hostname = check_hostname
    if cert:
        ctx.load_cert_chain(cert, key or None)
    return ctx


def subject_text(peercert: dict | None) -> str | None:
    """A certificate's subject as ``CN=client,O=cricket`` (None without a certificate)."""
    if not peercert:
        return None
    parts = [f"{k}={v}" for rdn in peercert.get("subject", ()) for k, v in rdn]
    names = {"commonName": "CN", "organizationName": "O", "organizationalUnitName": "OU",
             "countryName": "C", "localityName": "L", "stateOrProvinceName": "ST"}
    for old, new in names.items():
        parts = [p.replace(old + "=", new + "=", 1) if p.startswith(old + "=") else p for p in parts]
    return ",".join(parts) or None


# --- the probe -------------------------------------------------------------------------------------

def probe_call(xid: int, prog: int, vers: int) -> bytes:
    """The marked record of a NULL call with credential AUTH_TLS (empty) and verifier AUTH_NONE."""
    body = message.encode_call_header(xid, prog, vers, 0, struct.pack(">4I", AuthFlavor.AUTH_TLS, 0,
                                                                      AuthFlavor.AUTH_NONE, 0))
    return mark(len(body)) + body


def check_probe_reply(record: bytes, address: Any) -> None:
    """Raise :class:`TlsError` unless ``record`` is the STARTTLS answer to a probe."""
    seen: list[tuple[int, bytes]] = []
    try:
        message.decode_reply(record, lambda flavor, body: seen.append((flavor, bytes(body))))
    except AuthError as exc:
        raise TlsError(f"the server at {shown(address)} does not offer RPC-over-TLS (it answered the "
                       f"AUTH_TLS probe with {exc}); start it with --tls-cert and --tls-key, or "
                       "unset CRICKET_TLS") from None
    except RpcError as exc:
        raise TlsError(f"the server at {shown(address)} answered the TLS probe with an error: {exc}") from None
    if seen != [(AuthFlavor.AUTH_NONE, STARTTLS)]:
        raise TlsError(f"the server at {shown(address)} answered the TLS probe without the STARTTLS "
                       "verifier: it does not offer RPC-over-TLS")


def handshake_error(exc: BaseException, address: Any) -> TlsError:
    """A :class:`TlsError` saying what a failed handshake means for the user."""
    if isinstance(exc, ssl.SSLCertVerificationError):
        why = exc.verify_message or str(exc)
        if "hostname" in why.lower() or "ip address mismatch" in why.lower():
            hint = ("the server's certificate is for another name: connect by the name it was "
                    "issued for, or set CRICKET_TLS_SERVER_NAME")
        else:
            hint = "set CRICKET_TLS_CA to the CA that signed the server's certificate"
        return TlsError(f"TLS with {shown(address)}: the server's certificate was refused ({why}); {hint}")
    text = str(exc)
    if "certificate" in text.lower() or "alert" in text.lower() or isinstance(exc, ConnectionError):
        return TlsError(f"TLS with {shown(address)}: the server refused the handshake ({text}); it may "
                        "require a client certificate its CA signed: set CRICKET_TLS_CERT and "
                        "CRICKET_TLS_KEY")
    return TlsError(f"TLS with {shown(address)} failed: {text or type(exc).__name__}")


def shown(address: Any) -> str:
    """``host:port`` for a TCP address tuple, else the address as it is."""
    if isinstance(address, tuple) and len(address) >= 2:
        return f"{address[0]}:{address[1]}"
    return str(address)


def _check_alpn(ssl_object: Any, address: Any) -> None:
    if ssl_object.selected_alpn_protocol() != ALPN:
        raise TlsError(f"TLS with {shown(address)}: the server did not select ALPN {ALPN!r} (RFC 9289)")


# --- client side -----------------------------------------------------------------------------------

@dataclass
class ClientTls:
    """How a client sets up TLS: the context, the name to check the server's certificate against
    (default: the host it connects to), and the program/version the probe names."""

    context: ssl.SSLContext
    server_hostname: str | None = None
    prog: int = 0
    vers: int = 0

    def hostname_for(self, host: str) -> str | None:
        if self.server_hostname:
            return self.server_hostname
        return host if self.context.check_hostname else None

    def wrap(self, sock: socket.socket, address: Any, timeout: float | None) -> TlsSocket:
        """Probe, then run the handshake on ``sock`` (blocking); the TLS socket to use instead."""
        if is_unix(address):
            raise TlsError("RPC-over-TLS is for TCP; a Unix socket is protected by the file system")
        timeout = HANDSHAKE_TIMEOUT if timeout is None else timeout
        try:
            sock.settimeout(timeout)
            sock.sendall(probe_call(int.from_bytes(os.urandom(4), "big") & 0x7FFFFFFF,
                                    self.prog, self.vers))
            check_probe_reply(_read_record(sock, address), address)
            tls = TlsSocket(sock, self.context, self.hostname_for(address[0]), timeout)
            _check_alpn(tls.ssl_object, address)
            sock.settimeout(timeout)
            # TLS 1.3 finishes the client's handshake before the server has checked the client's
            # certificate: a NULL call inside TLS tells a refusal now, and clearly.
            tls.sendmsg([_null_call(self.prog, self.vers)])
            _answered(_read_record(tls, address))
        except (ssl.SSLError, ConnectionError) as exc:
            sock.close()
            raise handshake_error(exc, address) from None
        except (OSError, RpcError):
            sock.close()
            raise
        sock.settimeout(None)
        return tls

    async def open(self, loop: asyncio.AbstractEventLoop, protocol_factory: Callable[[], Any],
                   address: tuple[str, int]) -> tuple[asyncio.Transport, Any]:
        """Connect, probe and run the handshake (asyncio); the transport and protocol."""
        sock = socket.socket(socket.AF_INET6 if ":" in address[0] else socket.AF_INET,
                             socket.SOCK_STREAM)
        try:
            sock.setblocking(False)
            await loop.sock_connect(sock, address)
        except BaseException:
            sock.close()
            raise
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            await loop.sock_sendall(sock, probe_call(int.from_bytes(os.urandom(4), "big") & 0x7FFFFFFF,
                                                     self.prog, self.vers))
            record = await _read_record_async(loop, sock)
            check_probe_reply(record, address)
            transport, protocol = await loop.create_connection(
                protocol_factory, sock=sock, ssl=self.context,
                server_hostname=self.hostname_for(address[0]) or "",
                ssl_handshake_timeout=HANDSHAKE_TIMEOUT)
        except (ssl.SSLError, ConnectionError) as exc:
            sock.close()
            raise handshake_error(exc, address) from None
        except BaseException:
            sock.close()
            raise
        try:
            _check_alpn(transport.get_extra_info("ssl_object"), address)
        except TlsError:
            transport.close()
            raise
        return transport, protocol

    async def confirm(self, client: Any) -> None:
        """A NULL call inside TLS: a server that refused the client's certificate after the
        handshake (TLS 1.3 lets it) is told now, with a clear error."""
        try:
            await client.call(self.prog, self.vers, 0)
        except ReplyError:
            pass                        # an answer (PROG_UNAVAIL, ...) came inside TLS: accepted
        except RpcConnectionError as exc:
            await client.close()
            raise handshake_error(ConnectionResetError(str(exc)), client.address) from None


def _parse_mark(head: bytes, address: Any) -> int:
    word = int.from_bytes(head, "big")
    size = word & ~LAST_FRAGMENT
    if not word & LAST_FRAGMENT or size > _MAX_PROBE_REPLY:
        raise ProtocolError(f"the server at {shown(address)} answered the TLS probe with a record of "
                            f"{size} bytes; not an RPC server?")
    return size


def _answered(record: bytes) -> None:
    """Any well-formed reply to the NULL call after the handshake: the server took us."""
    try:
        message.decode_reply(record)
    except ReplyError:
        pass


def _null_call(prog: int, vers: int) -> bytes:
    body = message.encode_call_header(int.from_bytes(os.urandom(4), "big") & 0x7FFFFFFF, prog, vers,
                                      0, b"\0" * 16)
    return mark(len(body)) + body


def _read_record(sock: Any, address: Any) -> bytes:
    """One short record from a blocking socket (or a :class:`TlsSocket`)."""
    def exactly(n: int) -> bytes:
        data = bytearray(n)
        got = 0
        while got < n:
            k = sock.recv_into(memoryview(data)[got:])
            if not k:
                raise ConnectionResetError("the server closed the connection")
            got += k
        return bytes(data)
    return exactly(_parse_mark(exactly(4), address))


async def _read_record_async(loop: asyncio.AbstractEventLoop, sock: socket.socket) -> bytes:
    async def exactly(n: int) -> bytes:
        data = b""
        while len(data) < n:
            got = await loop.sock_recv(sock, n - len(data))
            if not got:
                raise ConnectionResetError("the server closed the connection after the TLS probe")
            data += got
        return data
    return await exactly(_parse_mark(await exactly(4), sock.getpeername()))


# --- server side -----------------------------------------------------------------------------------

@dataclass
class ServerTls:
    """How a server offers TLS: its context and whether plain calls are refused before the
    handshake (``required``)."""

    context: ssl.SSLContext
    required: bool = False
    handshake_timeout: float = HANDSHAKE_TIMEOUT

    @property
    def mutual(self) -> bool:
        return self.context.verify_mode == ssl.CERT_REQUIRED

    def intercept(self, conn: Any, call: CallHeader) -> bool:
        """Called for a call that arrives before the handshake: answer a probe (and upgrade), or
        refuse a plain call when TLS is required. True when the call has been answered."""
        if call.cred_flavor == AuthFlavor.AUTH_TLS:
            if call.proc != 0:
                conn.send(message.encode_auth_error(call.xid, AuthStat.AUTH_BADCRED))
                return True
            conn.send(message.encode_success(call.xid, (AuthFlavor.AUTH_NONE, STARTTLS)))
            conn.busy = True            # nothing more runs before the handshake
            conn.tls_gate = None
            conn.transport.pause_reading()   # the ClientHello waits in the socket for TLS
            task = asyncio.ensure_future(self._upgrade(conn))
            conn.server._tasks.add(task)
            task.add_done_callback(conn.server._tasks.discard)
            return True
        if self.required:
            log.debug("connection %d from %s: plain call before the TLS handshake refused",
                      conn.id, conn.peer)
            conn.send(message.encode_auth_error(call.xid, AuthStat.AUTH_TOOWEAK))
            return True
        return False

    async def _upgrade(self, conn: Any) -> None:
        if conn.queue or conn.reader.in_record:
            # Bytes sent after the probe before its answer: RFC 9289 has the client wait; taking
            # them as if they came inside TLS would let a relay inject calls.
            log.warning("connection %d from %s sent data after the TLS probe before the handshake; "
                        "closing it", conn.id, conn.peer)
            conn._close()
            return
        loop = asyncio.get_running_loop()
        try:
            transport = await loop.start_tls(conn.transport, conn, self.context, server_side=True,
                                             ssl_handshake_timeout=self.handshake_timeout)
        except (ssl.SSLError, OSError, asyncio.TimeoutError, ConnectionError) as exc:
            log.warning("connection %d from %s: TLS handshake failed: %s", conn.id, conn.peer, exc)
            conn.transport.close()
            conn.closed = True
            return
        if transport is None or conn.closed:
            return
        ssl_object = transport.get_extra_info("ssl_object")
        if ssl_object is None or ssl_object.selected_alpn_protocol() != ALPN:
            log.warning("connection %d from %s: TLS without ALPN %r (RFC 9289); closing it",
                        conn.id, conn.peer, ALPN)
            transport.close()
            conn.closed = True
            return
        conn.transport = transport
        conn.tls_identity = subject_text(transport.get_extra_info("peercert"))
        conn.tls_established()
        log.info("connection %d from %s: TLS %s %s%s", conn.id, conn.peer, ssl_object.version(),
                 ssl_object.cipher()[0],
                 f", client certificate {conn.tls_identity}" if conn.tls_identity else "")
        conn._hook(conn.server.on_tls, conn.id, conn.tls_identity)
