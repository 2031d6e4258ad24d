"""The asyncio RPC client: one connection, any number of calls in flight, replies matched by xid.

Calls made during one event-loop iteration are written together. Batched calls (no reply
expected) are queued and written together with the next normal call, or by
:meth:`AsyncClient.flush`. Timeouts are kept in one heap with a single timer.
"""
from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
import socket
from typing import Any

from . import message
from .auth import AuthNone, ClientAuth
from .client import Buffers, _nbytes, first_xid, verifier_check
from .constants import DEFAULT_MAX_RECORD, RPC_VERSION, MsgType
from .errors import ProtocolError, RecordTooLarge, RpcConnectionError, RpcError, RpcTimeout
from .heap import keep_large_buffers
from .record import RecordReader, mark
from .transport import Address, is_unix, parse_address

log = logging.getLogger(__name__)

_BATCH_FLUSH = 256 * 1024


class _ClientProtocol(asyncio.Protocol):
    def __init__(self, client: AsyncClient, max_record_size: int) -> None:
        self.client = client
        self.reader = RecordReader(max_record_size)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def data_received(self, data: bytes) -> None:
        try:
            records = self.reader.feed(data)
        except RecordTooLarge as exc:
            self.client._fail(exc)
            return
        pending = self.client._pending
        for record in records:
            try:
                xid = message.reply_xid(record)
            except ProtocolError as exc:
                self.client._fail(exc)
                return
            fut = pending.pop(xid, None)
            if fut is None or fut.done():
                log.debug("dropping a reply to xid %#x that nobody waits for", xid)
                continue
            try:
                offset = message.decode_reply(record, self.client._check_verifier)
            except RpcError as exc:
                fut.set_exception(exc)
            else:
                fut.set_result(memoryview(record)[offset:])

    def connection_lost(self, exc: Exception | None) -> None:
        pending = len(self.client._pending)
        self.client._fail(RpcConnectionError(
            f"the RPC server at {self.client.address} closed the connection with {pending} call(s) "
            "waiting for a reply; the server has gone away or dropped this client"))


class AsyncClient:
    """An asyncio connection to one RPC server. Create with ``await AsyncClient.connect(address)``."""

    def __init__(self, address: Address, *, timeout: float | None = 25.0,
                 auth: ClientAuth | None = None, max_record_size: int = DEFAULT_MAX_RECORD,
                 tls: Any = None) -> None:
        keep_large_buffers()
        self.address = parse_address(address)
        self.timeout = timeout
        self.auth = auth or AuthNone()
        self._auth_bytes = self.auth.header_bytes()
        self._check_verifier = verifier_check(self.auth)
        self._max_record_size = max_record_size
        self._xids = itertools.count(first_xid())
        self._pending: dict[int, asyncio.Future] = {}
        self._batch: list[Any] = []        # encoded calls not written yet
        self._batch_bytes = 0
        self._flush_scheduled = False
        self._deadlines: list[tuple[float, int]] = []     # heap of (deadline, xid)
        self._sweeper: asyncio.TimerHandle | None = None
        self._error: RpcError | None = None
        self._transport: asyncio.Transport | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._tls = tls                    # a cricket.rpc.tls.ClientTls (RFC 9289), or None
        self.encrypted = tls is not None

    @classmethod
    async def connect(cls, address: Address, *, connect_timeout: float | None = 10.0,
                      **kwargs: Any) -> AsyncClient:
        client = cls(address, **kwargs)
        await client._connect(connect_timeout)
        return client

    async def _connect(self, connect_timeout: float | None) -> None:
        loop = asyncio.get_running_loop()
        self._loop = loop
        proto = lambda: _ClientProtocol(self, self._max_record_size)  # noqa: E731
        try:
            if is_unix(self.address):
                coro = loop.create_unix_connection(proto, self.address)
            elif self._tls is not None:
                coro = self._tls.open(loop, proto, self.address)
            else:
                coro = loop.create_connection(proto, *self.address)
            self._transport, _ = await asyncio.wait_for(coro, connect_timeout)
        except RpcError:
            raise                          # a TLS failure, already saying what to do
        except (OSError, asyncio.TimeoutError) as exc:
            raise RpcConnectionError(f"could not connect to the RPC server at {self.address}: "
                                     f"{exc}; is it running?") from exc
        if self._tls is not None:
            await self._tls.confirm(self)

    # --- public API -----------------------------------------------------------------------------

    async def call(self, prog: int, vers: int, proc: int, buffers: Buffers = ()) -> memoryview:
        """Call a procedure with encoded arguments; returns the encoded result."""
        return await self._send(prog, vers, proc, buffers, True)

    def call_batched(self, prog: int, vers: int, proc: int, buffers: Buffers = ()) -> asyncio.Future:
        """Queue a call that expects no reply; it goes out with the next normal call.

        Returns an already completed future, so both ``client.call_batched(...)`` and
        ``await client.call_batched(...)`` work.
        """
        self._send(prog, vers, proc, buffers, False)
        done = self._loop.create_future()  # type: ignore[union-attr]
        done.set_result(None)
        return done

    async def null(self, prog: int, vers: int) -> None:
        await self.call(prog, vers, 0)

    async def flush(self) -> None:
        """Send queued batched calls now."""
        self._write_out()

    async def close(self) -> None:
        await self.flush()
        if self._transport is not None:
            self._transport.close()
        self._fail(RpcConnectionError("the client was closed"))

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # --- internals ------------------------------------------------------------------------------

    def _send(self, prog: int, vers: int, proc: int, buffers: Buffers, wants_reply: bool):
        if self._error is not None:
            raise self._error
        xid = next(self._xids) & 0xFFFFFFFF
        head = message.CALL_HEAD.pack(xid, MsgType.CALL, RPC_VERSION, prog, vers, proc) \
            + self._auth_bytes
        if buffers:
            size = len(head)
            for b in buffers:
                size += _nbytes(b)
            self._batch += (mark(size), head, *buffers)
        else:
            size = len(head)
            self._batch.append(mark(size) + head)
        self._batch_bytes += size + 4
        if not wants_reply:
            if self._batch_bytes >= _BATCH_FLUSH:
                self._write_out()
            return None
        loop = self._loop
        fut = loop.create_future()  # type: ignore[union-attr]
        self._pending[xid] = fut
        if self.timeout is not None:
            deadline = loop.time() + self.timeout  # type: ignore[union-attr]
            heap = self._deadlines
            if len(heap) > 2 * len(self._pending) + 1024:
                # Entries of answered calls stay until popped; drop them before they pile up.
                heap = self._deadlines = [e for e in heap if e[1] in self._pending]
                heapq.heapify(heap)
            heapq.heappush(heap, (deadline, xid))
            if self._sweeper is None:
                self._sweeper = loop.call_at(deadline, self._expire)  # type: ignore[union-attr]
        # Calls made in the same loop iteration leave in one write (pipelining costs one
        # system call per batch, not per call).
        if self._batch_bytes >= _BATCH_FLUSH:
            self._write_out()
        elif not self._flush_scheduled:
            self._flush_scheduled = True
            loop.call_soon(self._write_out)  # type: ignore[union-attr]
        return fut

    def _write_out(self) -> None:
        self._flush_scheduled = False
        if self._batch and self._error is None:
            batch = self._take_batch()
            self._transport.writelines(batch)  # type: ignore[union-attr]

    def _take_batch(self) -> list[Any]:
        batch, self._batch, self._batch_bytes = self._batch, [], 0
        return batch

    def _expire(self) -> None:
        """Fail the calls whose deadline has passed; re-arm for the next one."""
        self._sweeper = None
        now = self._loop.time()  # type: ignore[union-attr]
        heap = self._deadlines
        pending = self._pending
        while heap:
            deadline, xid = heap[0]
            if xid not in pending:
                heapq.heappop(heap)
                continue
            if deadline > now:
                self._sweeper = self._loop.call_at(deadline, self._expire)  # type: ignore[union-attr]
                return
            heapq.heappop(heap)
            fut = pending.pop(xid)
            if not fut.done():
                fut.set_exception(RpcTimeout(
                    f"no reply from the RPC server at {self.address} within {self.timeout} s; "
                    "raise the client's timeout if the call is expected to take longer"))

    def _fail(self, error: RpcError) -> None:
        if self._error is None:
            self._error = error
        if self._sweeper is not None:
            self._sweeper.cancel()
            self._sweeper = None
        pending, self._pending = self._pending, {}
        for fut in pending.values():
            if not fut.done():
                fut.set_exception(error)
        if self._transport is not None and not self._transport.is_closing():
            self._transport.close()
