"""The per-session bounds of this wave's server features, on a real emu server: executable graphs
(how many, and their nodes all together) and live IPC handles. Each bound is the server module's own
constant; past it the session gets CUDA_ERROR_OUT_OF_MEMORY, another session is not concerned, and
what is given back can be taken again."""
from __future__ import annotations

import pytest

from cricket.client.api import CudaError, connect
from cricket.cudafacts import curesult
from cricket.protocol import gen as P
from cricket.server import graphs, ipc


def _memset_nodes(buf, count: int) -> list:
    return [P.cr_graph_node(kind=2, memset=P.cr_memset_args(dst=buf.device_ptr, value=k & 0xFF, element_size=1,
                                                           count=1, stream=0)) for k in range(count)]


def _create(conn, nodes) -> int:
    return conn._check(conn._stub.CR_GRAPH_CREATE(P.cr_graph_args(nodes=nodes)), "cuGraphInstantiate").handle


def _out_of_memory(call) -> str:
    with pytest.raises(CudaError) as err:
        call()
    assert err.value.code == curesult.OUT_OF_MEMORY, err.value
    return str(err.value)


def test_a_session_holds_a_bounded_number_of_graphs(emu_server):
    with connect(emu_server.address) as conn, connect(emu_server.address) as other:
        buf = conn.alloc(16)
        node = _memset_nodes(buf, 1)
        made = [_create(conn, node) for _ in range(graphs.MAX_GRAPHS)]
        assert "executable graphs" in _out_of_memory(lambda: _create(conn, node))
        assert _create(other, _memset_nodes(other.alloc(16), 1))          # another session is not concerned
        conn._check(conn._stub.CR_GRAPH_DESTROY(made.pop()), "cuGraphExecDestroy")
        assert _create(conn, node)                                        # one given back, one taken again


def test_a_sessions_graphs_hold_a_bounded_number_of_nodes(emu_server):
    per_graph = P.CRICKET_MAX_GRAPH_NODES
    with connect(emu_server.address) as conn:
        buf = conn.alloc(16)
        nodes = _memset_nodes(buf, per_graph)
        made = [_create(conn, nodes) for _ in range(graphs.MAX_SESSION_NODES // per_graph)]
        _out_of_memory(lambda: _create(conn, nodes[:1]))
        conn._check(conn._stub.CR_GRAPH_DESTROY(made.pop()), "cuGraphExecDestroy")
        assert _create(conn, nodes)


def test_a_session_holds_a_bounded_number_of_ipc_handles(emu_server):
    with connect(emu_server.address) as conn:
        buf = conn.alloc(4096)
        for _ in range(ipc.MAX_EXPORTS):
            conn._stub.CR_IPC_GET_MEM_HANDLE(buf.device_ptr).handle
        res = conn._stub.CR_IPC_GET_MEM_HANDLE(buf.device_ptr)
        assert res.status == curesult.OUT_OF_MEMORY and "IPC handles" in res.message
        buf.free()                                      # the handles of freed memory are forgotten
        again = conn.alloc(4096)
        assert len(conn._stub.CR_IPC_GET_MEM_HANDLE(again.device_ptr).handle) == ipc.HANDLE_SIZE


def test_a_handle_of_freed_memory_never_opens_a_later_allocation_at_its_address(emu_server):
    with connect(emu_server.address) as owner, connect(emu_server.address) as other:
        buf = owner.alloc(4096)
        old = owner._stub.CR_IPC_GET_MEM_HANDLE(buf.device_ptr).handle
        ptr = buf.device_ptr
        buf.free()
        again = owner.to_device(b"secret!!" * 512)
        assert again.device_ptr == ptr                  # the allocator gave the address out again
        res = other._stub.CR_IPC_OPEN_MEM_HANDLE(old)
        assert res.status == curesult.INVALID_HANDLE, res

