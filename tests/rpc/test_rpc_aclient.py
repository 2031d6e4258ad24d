"""The asyncio client: pipelined calls, batching, timeouts, server loss; and a server whose
coroutine handlers hand blocking work to an executor without stalling other connections."""
from __future__ import annotations

import asyncio
import struct
import time

import pytest

from cricket.rpc import (AsyncClient, AuthSys, ProgMismatch, RpcConnectionError, RpcTimeout,
                         Server, ServerThread, new_event_loop)
from rpc_calc import CALC_PROG, CalcV1

INT2 = struct.Struct(">ii")


def arun(coro):
    loop = new_event_loop()
    try:
        return loop.run_until_complete(asyncio.wait_for(coro, 60))
    finally:
        loop.close()


def test_many_concurrent_calls_on_one_connection(calc_server):
    async def main():
        async with await AsyncClient.connect(calc_server.address) as rpc:
            results = await asyncio.gather(*(rpc.call(CALC_PROG, 1, 1, [INT2.pack(i, i)])
                                             for i in range(3000)))
            return [int.from_bytes(r, "big", signed=True) for r in results]
    assert arun(main()) == [2 * i for i in range(3000)]


def test_unix_socket_and_errors(unix_server):
    async def main():
        async with await AsyncClient.connect(unix_server.address) as rpc:
            await rpc.null(CALC_PROG, 1)
            with pytest.raises(ProgMismatch) as err:
                await rpc.null(CALC_PROG, 9)
            assert (err.value.low, err.value.high) == (1, 1)
            return bytes(await rpc.call(CALC_PROG, 1, 1, [INT2.pack(20, 22)]))
    assert arun(main()) == b"\0\0\0\x2a"


def test_batched_calls_then_count(calc_server):
    async def main():
        async with await AsyncClient.connect(calc_server.address) as rpc:
            for i in range(7):
                rpc.call_batched(CALC_PROG, 1, 3, [b"\0\0\0\1x\0\0\0"])
            await rpc.call_batched(CALC_PROG, 1, 3, [b"\0\0\0\1y\0\0\0"])   # awaitable too
            return int.from_bytes(await rpc.call(CALC_PROG, 1, 4), "big")
    assert arun(main()) == 8


def test_auth_sys_over_async_client(calc_server):
    async def main():
        async with await AsyncClient.connect(calc_server.address,
                                             auth=AuthSys(uid=7, gid=8, machinename="m")) as rpc:
            res = await rpc.call(CALC_PROG, 1, 5)
            return struct.unpack_from(">iII", res)
    assert arun(main()) == (1, 7, 8)


def test_timeout_then_usable(calc_server):
    async def main():
        async with await AsyncClient.connect(calc_server.address, timeout=0.2) as rpc:
            with pytest.raises(RpcTimeout):
                await rpc.call(CALC_PROG, 1, 6, [struct.pack(">i", 800)])
            rpc.timeout = 5
            return bytes(await rpc.call(CALC_PROG, 1, 1, [INT2.pack(1, 1)]))
    assert arun(main()) == b"\0\0\0\2"


def test_server_loss_fails_pending_calls():
    st = ServerThread(Server([CalcV1()])).start()

    async def main():
        rpc = await AsyncClient.connect(st.address)
        call = asyncio.ensure_future(rpc.call(CALC_PROG, 1, 6, [struct.pack(">i", 2000)]))
        await asyncio.sleep(0.1)
        t0 = time.monotonic()
        await asyncio.get_running_loop().run_in_executor(None, st.stop)
        with pytest.raises(RpcConnectionError, match="closed the connection"):
            await call
        with pytest.raises(RpcConnectionError):
            await rpc.call(CALC_PROG, 1, 0)
        return time.monotonic() - t0
    assert arun(main()) < 5


def test_blocking_handler_work_does_not_stall_other_connections(calc_server):
    async def main():
        slow = await AsyncClient.connect(calc_server.address)
        fast = await AsyncClient.connect(calc_server.address)
        sleeper = asyncio.ensure_future(slow.call(CALC_PROG, 1, 6, [struct.pack(">i", 600)]))
        await asyncio.sleep(0.05)
        t0 = time.monotonic()
        for i in range(20):
            await fast.call(CALC_PROG, 1, 1, [INT2.pack(i, 1)])
        fast_time = time.monotonic() - t0
        assert not sleeper.done()
        await sleeper
        await slow.close()
        await fast.close()
        return fast_time
    assert arun(main()) < 0.4


def test_calls_on_one_connection_are_answered_in_order(calc_server):
    async def main():
        async with await AsyncClient.connect(calc_server.address) as rpc:
            order = []

            async def tagged(tag, coro):
                await coro
                order.append(tag)
            await asyncio.gather(
                tagged("sleep", rpc.call(CALC_PROG, 1, 6, [struct.pack(">i", 200)])),
                tagged("add", rpc.call(CALC_PROG, 1, 1, [INT2.pack(1, 2)])))
            return order
    assert arun(main()) == ["sleep", "add"]


def test_unordered_server_lets_quick_calls_overtake():
    server = Server([CalcV1()], ordered=False)
    with ServerThread(server) as st:
        async def main():
            async with await AsyncClient.connect(st.address) as rpc:
                order = []

                async def tagged(tag, coro):
                    await coro
                    order.append(tag)
                await asyncio.gather(
                    tagged("sleep", rpc.call(CALC_PROG, 1, 6, [struct.pack(">i", 300)])),
                    tagged("add", rpc.call(CALC_PROG, 1, 1, [INT2.pack(1, 2)])))
                return order
        assert arun(main()) == ["add", "sleep"]


def test_answered_calls_do_not_pile_up_timeout_entries(calc_server):
    async def main():
        async with await AsyncClient.connect(calc_server.address, timeout=30) as rpc:
            for _ in range(10):
                await asyncio.gather(*(rpc.call(CALC_PROG, 1, 0) for _ in range(1000)))
            return len(rpc._deadlines), len(rpc._pending)
    entries, pending = arun(main())
    assert pending == 0 and entries <= 2 * 1000 + 1024 + 1


def test_disconnect_hook_waits_for_running_handlers():
    events = []

    class Slow(CalcV1):
        async def SLEEP(self, ms):
            await asyncio.sleep(ms / 1000)
            events.append("handler done")
            return 0

    server = Server([Slow()], on_disconnect=lambda cid: events.append("disconnected"))
    with ServerThread(server) as st:
        async def main():
            rpc = await AsyncClient.connect(st.address)
            rpc.call_batched(CALC_PROG, 1, 6, [struct.pack(">i", 300)])
            await rpc.close()                 # leaves while SLEEP is still running
            await asyncio.sleep(0.6)
        arun(main())
    assert events == ["handler done", "disconnected"]
