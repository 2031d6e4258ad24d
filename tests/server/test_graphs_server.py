"""Executable graphs on a real emu server (CR_GRAPH_*, cricket/server/graphs.py): the nodes are
replayed in order on the launch's stream, a launch may run a range of them, and the server refuses
what is not the session's or does not fit, and survives a graph whose memory was freed."""
from pathlib import Path

import numpy as np
import pytest

from cricket.client.api import CudaError, connect
from cricket.cudafacts import curesult
from cricket.protocol import gen as P

PTX = (Path(__file__).resolve().parents[2] / "examples" / "vector_add.ptx").read_bytes()
N = 256


def _kernel(fn, a, b, c) -> P.cr_graph_node:
    return P.cr_graph_node(kind=0, kernel=P.cr_launch_args(
        function=fn.handle, grid=P.cr_dim3(x=2, y=1, z=1), block=P.cr_dim3(x=128, y=1, z=1), shared_mem=0,
        stream=0, params=fn.pack([a, b, c, np.int32(N)])))


def _create(conn, nodes) -> int:
    return conn._check(conn._stub.CR_GRAPH_CREATE(P.cr_graph_args(nodes=nodes)), "cuGraphInstantiate").handle


def _launch(conn, graph: int, stream: int, first: int, count: int) -> None:
    conn._check(conn._stub.CR_GRAPH_LAUNCH(P.cr_graph_launch_args(graph=graph, stream=stream, first=first,
                                                                  count=count)), "cuGraphLaunch")


def test_nodes_run_in_order_on_the_stream_and_ranges_run_alone(emu_server):
    with connect(emu_server.address) as conn:
        fn = conn.load_module(PTX).get_function("_Z4vaddPKfS0_Pfi")        # c = a + b
        b, c, copy = (conn.alloc(4 * N) for _ in range(3))
        b.copy_from_host(np.arange(N, dtype=np.float32))
        stream = conn._stub.CR_STREAM_CREATE(0).handle
        event = conn._stub.CR_EVENT_CREATE(0).handle
        nodes = [P.cr_graph_node(kind=2, memset=P.cr_memset_args(dst=c.device_ptr, value=0, element_size=4,
                                                                 count=N, stream=0)),
                 *[_kernel(fn, c, b, c) for _ in range(3)],                    # c += b, three times
                 P.cr_graph_node(kind=1, copy=P.cr_dtod_args(dst=copy.device_ptr, src=c.device_ptr, size=4 * N,
                                                             stream=0)),
                 P.cr_graph_node(kind=3, event_record=event)]
        graph = _create(conn, nodes)
        for _ in range(2):
            conn._stub.CR_GRAPH_LAUNCH_ASYNC_batched(P.cr_graph_launch_args(graph=graph, stream=stream, first=0,
                                                                            count=len(nodes)))
        conn._check(conn._stub.CR_EVENT_SYNCHRONIZE(event), "cuEventSynchronize")
        assert copy.to_host(np.float32).tolist() == (3 * np.arange(N, dtype=np.float32)).tolist()
        _launch(conn, graph, stream, 1, 1)                                     # one more c += b, alone
        assert c.to_host(np.float32).tolist() == (4 * np.arange(N, dtype=np.float32)).tolist()
        conn._check(conn._stub.CR_GRAPH_DESTROY(graph), "cuGraphExecDestroy")


def test_what_is_not_the_sessions_or_does_not_fit_is_refused(emu_server):
    with connect(emu_server.address) as conn, connect(emu_server.address) as other:
        fn = conn.load_module(PTX).get_function("_Z4vaddPKfS0_Pfi")
        buf = conn.alloc(4 * N)
        graph = _create(conn, [_kernel(fn, buf, buf, buf)])
        codes = {}
        for what, call in {
            "unknown function": lambda: _create(other, [_kernel(fn, buf, buf, buf)]),
            "parameter size": lambda: _create(conn, [P.cr_graph_node(kind=0, kernel=P.cr_launch_args(
                function=fn.handle, grid=P.cr_dim3(x=1, y=1, z=1), block=P.cr_dim3(x=1, y=1, z=1), shared_mem=0,
                stream=0, params=b"\0" * 4))]),
            "unknown event": lambda: _create(conn, [P.cr_graph_node(kind=4, event_wait=12345678)]),
            "range past the end": lambda: _launch(conn, graph, 0, 0, 2),
            "another session's graph": lambda: _launch(other, graph, 0, 0, 1),
        }.items():
            with pytest.raises(CudaError) as err:
                call()
            codes[what] = err.value.code
        assert codes == {"unknown function": curesult.INVALID_HANDLE, "parameter size": curesult.INVALID_VALUE,
                         "unknown event": curesult.INVALID_HANDLE, "range past the end": curesult.INVALID_VALUE,
                         "another session's graph": curesult.INVALID_HANDLE}
        conn._check(conn._stub.CR_GRAPH_DESTROY(graph), "cuGraphExecDestroy")
        with pytest.raises(CudaError) as err:
            conn._check(conn._stub.CR_GRAPH_DESTROY(graph), "cuGraphExecDestroy")
        assert err.value.code == curesult.INVALID_HANDLE


def test_a_graph_whose_memory_was_freed_fails_at_its_launch_and_the_server_goes_on(emu_server):
    # CUDA: freeing memory an instantiated graph uses is the program's bug; the replayed kernel's
    # access is an illegal address, sticky for the session (as for any kernel) until a reset.
    with connect(emu_server.address) as conn, connect(emu_server.address) as other:
        fn = conn.load_module(PTX).get_function("_Z4vaddPKfS0_Pfi")
        buf = conn.alloc(4 * N)
        graph = _create(conn, [_kernel(fn, buf, buf, buf)])
        buf.free()
        conn._stub.CR_GRAPH_LAUNCH_ASYNC_batched(P.cr_graph_launch_args(graph=graph, stream=0, first=0, count=1))
        with pytest.raises(CudaError) as err:
            conn.synchronize()
        assert err.value.code == curesult.ILLEGAL_ADDRESS
        assert other.alloc(16).size == 16                      # another session is not concerned
        conn._check(conn._stub.CR_DEVICE_RESET(), "cuDevicePrimaryCtxReset")
        again = conn.alloc(4 * N)
        again.copy_from_host(np.ones(N, np.float32))
        assert again.to_host(np.float32).sum() == N
