"""Addresses of RPC endpoints (TCP or Unix domain sockets) and the choice of event loop."""
from __future__ import annotations

import ipaddress
import logging
import socket
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, TypeVar, Union

if TYPE_CHECKING:                  # asyncio is imported where a loop is made: a blocking client
    import asyncio                 # (the CUDA shim's) starts without it

log = logging.getLogger(__name__)

T = TypeVar("T")
TcpAddress = tuple[str, int]
Address = Union[TcpAddress, str]
"""``(host, port)`` for TCP, ``"host:port"``, or a Unix socket path (``"/path"`` or ``"unix:/path"``)."""


MAX_PORT = 65535


def parse_address(address: Address) -> TcpAddress | str:
    """Normalise an address: a ``(host, port)`` tuple for TCP, a path string for Unix sockets.
    A port outside 0-65535 is a ``ValueError`` (the system would silently wrap it)."""
    if isinstance(address, tuple):
        host, port = address
        return str(host), _port(int(port), f"{host}:{port}")
    if not isinstance(address, str) or not address:
        raise ValueError(f"not an RPC address: {address!r}; use (host, port), 'host:port' or a path")
    if address.startswith("unix:"):
        return address[5:]
    if "/" in address:
        return address
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"not an RPC address: {address!r}; use 'host:port' or a Unix socket path")
    return host.strip("[]") or "127.0.0.1", _port(int(port), address)


def _port(port: int, shown: str) -> int:
    if not 0 <= port <= MAX_PORT:
        raise ValueError(f"{shown}: port {port} is out of range; use 0-{MAX_PORT}")
    return port


def is_unix(address: TcpAddress | str) -> bool:
    return isinstance(address, str)


def is_loopback(host: str) -> bool:
    """True for a loopback IP address (IPv4, IPv6, or IPv4 mapped into IPv6; a zone is ignored);
    False for any other address and for text that is not an IP address."""
    try:
        address = ipaddress.ip_address(str(host).split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback


# A Unix stream socket holds what its sender's SO_SNDBUF allows (no autotuning as for TCP): at the
# default (~208 KiB) a copy of 1 MiB crosses in five buffer-fulls, each costing both sides a
# wake-up. Up to net.core.wmem_max is granted to any process.
UNIX_SNDBUF = 4 << 20


def widen_unix_buffer(sock: socket.socket) -> None:
    """Let a Unix stream socket hold up to :data:`UNIX_SNDBUF` bytes unread (as far as the system
    allows); quietly keeps the default where it refuses."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, UNIX_SNDBUF)
    except OSError as exc:
        log.debug("SO_SNDBUF %d refused (%s); the default stays", UNIX_SNDBUF, exc)


def connect_socket(address: Address, timeout: float | None) -> socket.socket:
    """A connected blocking stream socket (TCP with Nagle off, or Unix)."""
    addr = parse_address(address)
    if is_unix(addr):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        widen_unix_buffer(sock)
        sock.settimeout(timeout)
        try:
            sock.connect(addr)
        except BaseException:
            sock.close()
            raise
    else:
        sock = socket.create_connection(addr, timeout=timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.settimeout(None)
    return sock


def new_event_loop() -> asyncio.AbstractEventLoop:
    """A uvloop loop when uvloop is installed, else asyncio's default loop."""
    import asyncio
    try:
        import uvloop
    except ImportError:
        log.warning("uvloop is not installed; serving with the asyncio event loop")
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


def run(main: Coroutine[Any, Any, T]) -> T:
    """Run ``main`` to completion on a fresh loop from :func:`new_event_loop`."""
    import asyncio
    with asyncio.Runner(loop_factory=new_event_loop) as runner:
        return runner.run(main)
