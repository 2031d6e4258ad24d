"""Client stubs and server skeletons: argument and result packing through the contract
the RPC runtime uses (``rpc.call(prog, vers, proc, buffers) -> result bytes``,
``rpc.call_batched(...)``, ``skeleton.procedures[proc]``).

The runtime itself comes with cricket.rpc; here an in-process loop plays its part: it
joins the stub's buffers, decodes them with the skeleton's Procedure, calls the method
and encodes the result, exactly the steps the runtime performs around the network.
"""
from __future__ import annotations

import asyncio
import inspect

import pytest

from cricket.xdr import Packer, Unpacker


class InProcessRpc:
    def __init__(self, skeleton) -> None:
        self.skeleton = skeleton
        self.sent: list[tuple[int, int, int, bytes]] = []
        self.batched: list[tuple[int, int, int, bytes]] = []

    def _dispatch(self, prog, vers, proc, buffers):
        assert (prog, vers) == (self.skeleton.PROGRAM, self.skeleton.VERSION)
        args_bytes = b"".join(bytes(b) for b in buffers)
        procedure = self.skeleton.procedures[proc]
        u = Unpacker(args_bytes)
        args = procedure.decode_args(u)
        u.done()
        return args_bytes, procedure, getattr(self.skeleton, procedure.name)(*args)

    def _reply(self, procedure, result) -> bytes:
        p = Packer()
        procedure.encode_result(p, result)
        return p.get_buffer()

    def call(self, prog, vers, proc, buffers):
        args_bytes, procedure, result = self._dispatch(prog, vers, proc, buffers)
        self.sent.append((prog, vers, proc, args_bytes))
        return self._reply(procedure, result)

    def call_batched(self, prog, vers, proc, buffers) -> None:
        args_bytes, _, _ = self._dispatch(prog, vers, proc, buffers)
        self.batched.append((prog, vers, proc, args_bytes))


class AsyncInProcessRpc(InProcessRpc):
    async def call(self, prog, vers, proc, buffers):
        args_bytes, procedure, result = self._dispatch(prog, vers, proc, buffers)
        if inspect.isawaitable(result):
            result = await result
        self.sent.append((prog, vers, proc, args_bytes))
        return self._reply(procedure, result)

    async def call_batched(self, prog, vers, proc, buffers) -> None:
        args_bytes, _, result = self._dispatch(prog, vers, proc, buffers)
        if inspect.isawaitable(result):
            await result
        self.batched.append((prog, vers, proc, args_bytes))


def make_server(ev):
    class Server(ev.EVERYTHING_V1_Server):
        def __init__(self):
            self.log = []

        def PING(self):
            return None

        def ADD(self, a, b):
            return a + b

        def ECHO(self, e):
            return e

        def REVERSE(self, lst):
            out = None
            while lst is not None:
                out = ev.node(value=lst.value, label=lst.label, next=out)
                lst = lst.next
            return out

        def GREET(self, who, times):
            return ", ".join([f"hello {who}"] * times)

        def LOG(self, line):
            self.log.append(line)
    return Server()


def test_sync_stub_packs_arguments_like_rpcgen_and_decodes_results(ev):
    rpc = InProcessRpc(make_server(ev))
    client = ev.EVERYTHING_V1_Client(rpc)
    assert (client.PROGRAM, client.VERSION) == (0x20000099, 1)
    assert client.ADD(40, 2) == 42
    assert rpc.sent[-1] == (0x20000099, 1, 1, bytes.fromhex("0000002800000002"))
    assert client.PING() is None
    assert rpc.sent[-1] == (0x20000099, 1, 0, b"")
    assert client.GREET("bob", 2) == "hello bob, hello bob"
    assert rpc.sent[-1][3] == b"\0\0\0\x03bob\0" + b"\0\0\0\x02"


def test_stub_round_trips_structs_and_lists(ev):
    client = ev.EVERYTHING_V1_Client(InProcessRpc(make_server(ev)))
    head = None
    for i in range(3):
        head = ev.node(value=i, label=str(i), next=head)
    rev = client.REVERSE(head)
    assert [rev.value, rev.next.value, rev.next.next.value] == [0, 1, 2]
    p = ev.point(x=1, y=2)
    e = ev.everything(
        i=1, u=2, ui=3, h=4, uh=5, f=0.5, d=0.25, b=False, c=1, s=2, us=3, col=ev.RED,
        an=ev.FIRST, fo=b"abcde", vo=b"", f4=b"wxyz", bl=b"", nm="", anystr="", farr=[0, 0, 0],
        pts=[p], many=[], few=[], lst=None, sh=ev.shape(ev.RED, center=p),
        mb=ev.maybe(False), num=ev.numbered(1, d=1.0), opt=p, from_=0)
    assert client.ECHO(e) == e


def test_batched_form_sends_without_reply(ev):
    server = make_server(ev)
    rpc = InProcessRpc(server)
    client = ev.EVERYTHING_V1_Client(rpc)
    assert client.LOG_batched("line one") is None
    assert client.ADD_batched(1, 2) is None
    assert [b[2] for b in rpc.batched] == [5, 1] and rpc.sent == []
    assert server.log == ["line one"]


def test_skeleton_describes_procedures_for_the_runtime(ev):
    procs = ev.EVERYTHING_V1_Server.procedures
    assert sorted(procs) == [0, 1, 2, 3, 4, 5]
    assert procs[1].name == "ADD" and procs[1].number == 1
    assert procs[4].arg_names == ("who", "times")
    assert procs[0].decode_args(Unpacker(b"")) == ()
    p = Packer()
    procs[0].encode_result(p, None)
    assert p.get_buffer() == b""
    assert procs[1].decode_args(Unpacker(bytes.fromhex("0000002800000002"))) == (40, 2)
    with pytest.raises(NotImplementedError):
        ev.EVERYTHING_V1_Server().ADD(1, 2)
    assert ev.EVERYTHING_V2_Server.procedures[1].decode_args(Unpacker(b"\0" * 7 + b"\1" + b"\0" * 8)) == (1, 0)


def test_asyncio_stub_with_async_skeleton_methods(ev):
    class Async(ev.EVERYTHING_V2_Server):
        async def ADD(self, a, b):
            await asyncio.sleep(0)
            return a + b

    async def main():
        rpc = AsyncInProcessRpc(Async())
        client = ev.EVERYTHING_V2_AsyncClient(rpc)
        assert inspect.iscoroutinefunction(client.ADD)
        assert await client.ADD(2**40, 2**40) == 2**41
        assert await client.ADD_batched(1, 1) is None
        return rpc
    rpc = asyncio.run(main())
    assert [s[:3] for s in rpc.sent] == [(0x20000099, 2, 1)]
    assert [s[:3] for s in rpc.batched] == [(0x20000099, 2, 1)]


def test_large_opaque_argument_reaches_the_transport_as_a_view(ev):
    captured = {}

    class Capture:
        def call(self, prog, vers, proc, buffers):
            captured["buffers"] = buffers
            p = Packer()
            ev._P_everything(p, e)
            return p.get_buffer()

    p = ev.point(x=1, y=2)
    e = ev.everything(
        i=1, u=2, ui=3, h=4, uh=5, f=0.5, d=0.25, b=False, c=1, s=2, us=3, col=ev.RED,
        an=ev.FIRST, fo=b"abcde", vo=bytes(1 << 20), f4=b"wxyz", bl=b"", nm="", anystr="",
        farr=[0, 0, 0], pts=[], many=[], few=[], lst=None, sh=ev.shape(ev.RED, center=p),
        mb=ev.maybe(False), num=ev.numbered(1, d=1.0), opt=None, from_=0)
    assert ev.EVERYTHING_V1_Client(Capture()).ECHO(e) == e
    assert any(isinstance(b, memoryview) and len(b) == 1 << 20 for b in captured["buffers"])


def test_asyncio_stub_accepts_a_plain_call_batched(ev):
    class Rpc(AsyncInProcessRpc):
        def call_batched(self, prog, vers, proc, buffers):  # not a coroutine
            self.batched.append((prog, vers, proc, b"".join(buffers)))

    rpc = Rpc(make_server(ev))
    asyncio.run(ev.EVERYTHING_V1_AsyncClient(rpc).LOG_batched("x"))
    assert rpc.batched == [(0x20000099, 1, 5, b"\0\0\0\x01x\0\0\0")]
