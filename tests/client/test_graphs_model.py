"""The client's graph model (cricket/client/graphs.py), without a server: the order an executable
graph runs its nodes in, child graphs inlined, the device ranges and client steps a launch is made
of, and what cudaGraphExecUpdate accepts."""
import pytest

from cricket.client import graphs
from cricket.client.errors import CudaRuntimeError
from cricket.client.graphs import D2D, D2H, EMPTY, HOST, KERNEL, MEMCPY, MEMSET


def _kernel(tag: int) -> tuple:
    return graphs.kernel_params(0x10, (1, 1, 1), (32, 1, 1), 0, tag.to_bytes(4, "little"), 0x20, ((0, 4),))


def test_every_node_runs_after_its_dependencies_and_children_are_inlined():
    g = graphs.create_graph()
    child = graphs.create_graph()
    c1 = child.add(KERNEL, _kernel(1), [])
    child.add(KERNEL, _kernel(2), [c1])
    d = g.add(KERNEL, _kernel(3), [])
    b = g.add(KERNEL, _kernel(4), [d])
    a = g.add(graphs.CHILD, (child.clone(register=False)[0],), [])
    g.add(KERNEL, _kernel(5), [a, b])
    ex = graphs.instantiate(g)
    order = [n.params[4][0] for n in ex.order]
    for before, after in ((3, 4), (1, 2), (2, 5), (4, 5)):
        assert order.index(before) < order.index(after), order
    assert sorted(order) == [1, 2, 3, 4, 5]
    assert ex.steps == [("server", 0, 5)] and ex.kernels == 5     # all on the device: one launch call
    graphs.destroy_exec(ex.handle)


def test_host_steps_split_the_device_ranges():
    g = graphs.create_graph()
    k = g.add(KERNEL, _kernel(1), [])
    m = g.add(MEMSET, (0x1000, 0, 4, 16, 3, 128), [k])          # three pitched rows: three memsets
    copy = g.add(MEMCPY, (0x2000, 0x1000, 64, D2H), [m])
    host = g.add(HOST, (0x30, 0), [copy])
    e = g.add(EMPTY, (), [host])
    g.add(MEMCPY, (0x3000, 0x1000, 64, D2D), [e])
    ex = graphs.instantiate(g)
    assert [s[0] for s in ex.steps] == ["server", "client", "client", "server"]
    assert ex.steps[0] == ("server", 0, 4) and ex.steps[3] == ("server", 4, 1)
    assert ex.steps[1][1].params[3] == D2H and ex.steps[2][1].kind == HOST
    graphs.destroy_exec(ex.handle)


def test_a_cycle_is_refused_at_instantiation():
    g = graphs.create_graph()
    a = g.add(KERNEL, _kernel(1), [])
    b = g.add(KERNEL, _kernel(2), [a])
    a.deps.append(b)
    with pytest.raises(CudaRuntimeError):
        graphs.instantiate(g)


def test_exec_update_needs_the_same_node_types_and_edges():
    def build(second_kind: int, edge: bool) -> graphs.Graph:
        g = graphs.create_graph()
        a = g.add(KERNEL, _kernel(1), [])
        g.add(second_kind, _kernel(2) if second_kind == KERNEL else (), [a] if edge else [])
        return g
    ex = graphs.instantiate(build(KERNEL, True))
    changed = build(KERNEL, True)
    changed.nodes[1].params = _kernel(7)
    assert graphs.update(ex, changed)[0] == graphs.UPDATE_SUCCESS
    assert [n.params[4][0] for n in ex.order] == [1, 7]
    assert graphs.update(ex, build(KERNEL, False))[0] == graphs.UPDATE_TOPOLOGY_CHANGED
    assert graphs.update(ex, build(EMPTY, True))[0] == graphs.UPDATE_NODE_TYPE_CHANGED
    graphs.destroy_exec(ex.handle)
