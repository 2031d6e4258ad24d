"""Failed authentications: each one logged at the default level with the peer and the time, a TCP
peer slowed down (exponential back-off, shared by all its connections), and a connection closed
after a few failures. Wraps the program's HELLO, where the token is checked."""
from __future__ import annotations

import asyncio
import inspect
import logging
import time
from collections import OrderedDict
from typing import Any

from ..cudafacts import curesult
from ..rpc import current_call, current_connection_id

log = logging.getLogger(__name__)

BASE_DELAY = 0.25          # seconds before answering a peer's first failed HELLO
MAX_DELAY = 8.0            # the longest back-off
FORGET_AFTER = 300.0       # a peer with no failure for this long starts afresh
FAILURES_PER_CONNECTION = 3
_MAX_TRACKED = 4096        # peers and connections remembered (the oldest are forgotten first)


def peer_host(peer: Any) -> str:
    """The host part of a peer address (the port changes with every connection)."""
    if isinstance(peer, tuple) and peer:
        return str(peer[0])
    return "unix socket"


class AuthGuard:
    """Per-peer back-off and per-connection failure counts."""

    def __init__(self, base: float = BASE_DELAY, cap: float = MAX_DELAY,
                 per_connection: int = FAILURES_PER_CONNECTION) -> None:
        self.base = base
        self.cap = cap
        self.per_connection = per_connection
        self._peers: OrderedDict[str, tuple[int, float]] = OrderedDict()   # host: (failures, until)
        self._connections: OrderedDict[int, int] = OrderedDict()           # id: failures

    def wait(self, host: str) -> float:
        """Seconds this peer must still wait before its next HELLO is answered."""
        entry = self._peers.get(host)
        return 0.0 if entry is None else max(entry[1] - time.monotonic(), 0.0)

    def failed(self, host: str, connection_id: int) -> tuple[float, int, bool]:
        """Count a failure: (the back-off in seconds, the peer's failures in a row, whether the
        connection must be closed)."""
        now = time.monotonic()
        count, until = self._peers.pop(host, (0, 0.0))
        if now - until > FORGET_AFTER:
            count = 0
        count += 1
        delay = min(self.base * 2 ** (count - 1), self.cap)
        self._peers[host] = (count, now + delay)
        on_conn = self._connections.pop(connection_id, 0) + 1
        self._connections[connection_id] = on_conn
        for table in (self._peers, self._connections):
            while len(table) > _MAX_TRACKED:
                table.popitem(last=False)
        return delay, count, on_conn >= self.per_connection

    def succeeded(self, host: str, connection_id: int) -> None:
        self._peers.pop(host, None)
        self._connections.pop(connection_id, None)


def guard_hello(program: Any, server: Any, guard: AuthGuard | None = None) -> AuthGuard:
    """Replace ``program.CR_HELLO`` (before ``program`` is added to ``server``) by one that applies
    ``guard`` to HELLOs refused for their token."""
    guard = guard or AuthGuard()
    hello = program.CR_HELLO

    async def CR_HELLO(args: Any) -> Any:
        call = current_call()
        host = peer_host(call.peer)
        # Local peers (a Unix socket) all share one name: slowing them down would let one local
        # user delay every other; their failures are still logged and cut off.
        remote = isinstance(call.peer, tuple)
        connection_id = current_connection_id()
        wait = guard.wait(host) if remote else 0.0
        if wait:
            await asyncio.sleep(wait)
        res = hello(args)
        if inspect.isawaitable(res):
            res = await res
        if getattr(res, "status", 0) != curesult.NOT_PERMITTED:
            if getattr(res, "status", 0) == 0:
                guard.succeeded(host, connection_id)
            return res
        delay, count, close = guard.failed(host, connection_id)
        delay = delay if remote else 0.0
        session = program.sessions.get(connection_id)
        who = (session.peer if session is not None and session.peer else None) or call.peer
        log.warning("authentication failed: wrong token from %s (unix socket) in HELLO at %s (%d in a row "
                    "from this host; answering after %.2f s%s)" if not remote else
                    "authentication failed: wrong token from %s in HELLO at %s (%d in a row from "
                    "this host; answering after %.2f s%s)", who or "a peer",
                    time.strftime("%Y-%m-%dT%H:%M:%S%z"), count, delay,
                    "; closing the connection" if close else "")
        await asyncio.sleep(delay)
        if close:
            asyncio.get_running_loop().call_soon(server.close_connection, connection_id)
        return res

    program.CR_HELLO = CR_HELLO
    return guard
