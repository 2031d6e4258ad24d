"""cudaMemcpy's pinned fast path (``cext/pinned_copy.pyx``, its twin ``cricket/client/pinned_copy.py``):
in the plain case a synchronous copy between pinned memory the server maps and the device moves
the bytes with one call and counts them, and in every case beside it (not pinned, another kind,
a deferred copy or printf output pending, several devices, too large) it steps aside for the
general implementation; failures come back as the same ``cudaError_t`` and last error. In-process
on a real emu server (compiled and twin, compared), and through ``cricket run`` with an
nvcc-built program (``programs/pinned_copy_cases.cu``), which the twin pass of `make test` runs
again with ``CRICKET_PUREPYTHON=1``."""
from __future__ import annotations

import ctypes

import pytest

from client_runtime_support import build_program, cricket_run, implementation, runtimes

from cricket.client import shm_pinned
from cricket.client.errors import ERR_INVALID_VALUE
from cricket.client.runtime import Runtime

IMPLEMENTATIONS = ["cricket._cext.pinned_copy", "cricket.client.pinned_copy"]
H2D, D2H, DEFAULT = 1, 2, 4
SIZE = 3 * 4096


@pytest.fixture
def runtime(monkeypatch, server):
    """A new Runtime (the process state) connected to the server."""
    yield from runtimes(monkeypatch, server.address)


def _outcomes(module_name: str, rt: Runtime) -> list:
    """What each copy returns, which of them the general implementation got (it records them and
    succeeds), what the device and the host hold after each, the stats and the last error."""
    general = []

    def memcpy(dst: int, src: int, count: int, kind: int) -> int:
        general.append(count)
        return 0
    memcpy.__name__ = "memcpy"
    entry = implementation(module_name).PinnedMemcpy(memcpy, rt, True)
    conn = rt.conn
    dev = conn._stub.CR_MEM_ALLOC(SIZE).ptr
    rt.add_allocation(dev, SIZE)
    host = rt.host_alloc(SIZE)
    assert shm_pinned.owns(conn, host), "the server maps no pinned memory here"
    view = (ctypes.c_ubyte * SIZE).from_address(host)
    plain = ctypes.create_string_buffer(SIZE)
    seen = []

    def copy(what: str, dst: int, src: int, count: int, kind: int, mapped: bool = True) -> None:
        general.clear()
        code = entry(dst, src, count, kind)
        seen.append((what, code, tuple(general), conn.memcpy_dtoh(dev, 8), bytes(view[:8]) if mapped else None,
                     rt.stats.bytes_htod, rt.stats.bytes_dtoh, rt.thread.last_error))
        rt.thread.last_error = 0

    view[:SIZE] = bytes(range(256)) * (SIZE // 256)
    copy("plain H→D", dev, host, 4096, H2D)
    copy("plain H→D at an offset", dev + 1, host + 4096 + 5, 100, H2D)
    view[:8] = bytes(8)
    copy("plain D→H", host, dev, SIZE, D2H)
    copy("plain D→H at an offset", host + 3, dev + 8, 8, D2H)
    copy("not pinned", dev, ctypes.addressof(plain), 4096, H2D)
    copy("past the pinned allocation", dev, host + 4096, SIZE, H2D)
    copy("cudaMemcpyDefault", dev, host, 4096, DEFAULT)
    copy("device to device", dev, dev + 4096, 4096, 3)
    copy("zero bytes", dev, host, 0, H2D)
    copy("more than one part", dev, host, shm_pinned.PART + 1, H2D)
    conn.output.armed = True
    copy("device printf output to fetch first", host, dev, 4096, D2H)
    conn.output.armed = False
    started = rt.dtoh_start(host + 4096, dev, 16, 0)
    rt.defer_dtoh(started, host + 4096, 16)
    copy("a deferred copy pending", dev, host, 4096, H2D)
    rt.finish_deferred()
    rt.multi_device = True
    copy("several devices in use", dev, host, 4096, H2D)
    rt.multi_device = False
    copy("outside every device allocation", dev + SIZE, host, 4096, H2D)
    copy("the device range runs past its allocation", host, dev + SIZE - 8, 4096, D2H)
    copy("after the failures", dev, host, 4096, H2D)
    rt.host_free(host)
    copy("freed pinned memory", dev, host, 4096, H2D, mapped=False)     # (the entry reads nothing there)
    return seen


@pytest.mark.parametrize("module", IMPLEMENTATIONS)
def test_the_plain_case_is_one_call_and_every_other_case_takes_the_general_path(module, runtime):
    seen = {what: rest for what, *rest in _outcomes(module, runtime())}
    # the plain cases: done here (the general implementation saw none), bytes moved and counted;
    # the host buffer holds i % 256 at byte i
    assert seen["plain H→D"][:3] == [0, (), bytes(range(8))]
    assert seen["plain H→D at an offset"][:3] == [0, (), bytes([0, 5, 6, 7, 8, 9, 10, 11])]
    assert seen["plain D→H"][:4] == [0, (), bytes([0, 5, 6, 7, 8, 9, 10, 11]), bytes([0, 5, 6, 7, 8, 9, 10, 11])]
    assert seen["plain D→H at an offset"][:4] == [0, (), bytes([0, 5, 6, 7, 8, 9, 10, 11]),
                                                  bytes([0, 5, 6, 12, 13, 14, 15, 16])]
    assert seen["plain H→D"][4:6] == [4096, 0]
    assert seen["plain D→H at an offset"][4:6] == [4196, SIZE + 8]
    # the cases beside it reach the general implementation, with the count they were given
    for what, count in [("not pinned", 4096), ("past the pinned allocation", SIZE),
                        ("cudaMemcpyDefault", 4096), ("device to device", 4096), ("zero bytes", 0),
                        ("more than one part", shm_pinned.PART + 1),
                        ("device printf output to fetch first", 4096),
                        ("a deferred copy pending", 4096), ("several devices in use", 4096),
                        ("freed pinned memory", 4096)]:
        assert seen[what][:2] == [0, (count,)], what
    # a failure on the fast path: the cudaError_t, kept as the thread's last error
    for what in ("outside every device allocation", "the device range runs past its allocation"):
        assert seen[what][0] == ERR_INVALID_VALUE and seen[what][1] == () and seen[what][-1] == ERR_INVALID_VALUE, what
    assert seen["after the failures"][:2] == [0, ()]


def test_compiled_and_twin_answer_alike(runtime):
    compiled, twin = (_outcomes(m, runtime()) for m in IMPLEMENTATIONS)
    assert compiled == twin


def test_the_face_takes_cudaMemcpy_through_the_fast_path_and_captures_still_see_memcpy():
    from cricket.client import runtime_api, runtime_calls
    entry = runtime_api.IMPLEMENTATIONS["cudaMemcpy"]
    assert type(entry).__name__ == "PinnedMemcpy"
    assert entry.__wrapped__ is runtime_calls.memcpy      # what capture.hook puts in front of


@pytest.fixture(scope="module")
def program(tmp_path_factory, shim):
    return build_program(tmp_path_factory, "pinned_copy_cases")


@pytest.fixture(scope="module")
def printing_program(tmp_path_factory, shim):
    return build_program(tmp_path_factory, "pinned_copy_cases", "-DWITH_PRINTF")


def _run(exe, server, *args: str) -> str:
    res = cricket_run([str(exe), *args], server=server.address, timeout=300)
    assert res.returncode == 0 and "FAIL" not in res.stdout, res.stdout + res.stderr[-3000:]
    return res.stdout


@pytest.mark.nvcc
def test_pinned_copies_through_the_shim_move_the_bytes_in_order(program, server):
    out = _run(program, server)
    assert out.count("PASS ") >= 20 and out.rstrip().endswith("PASS"), out


@pytest.mark.nvcc
def test_a_faulting_kernel_is_reported_by_the_next_pinned_copy(program, server):
    out = _run(program, server, "fault")
    assert "copy: cudaErrorIllegalAddress" in out and "again: cudaErrorIllegalAddress" in out, out


@pytest.mark.nvcc
def test_a_forked_child_copies_its_own_pinned_memory_through_its_own_session(program, server):
    out = _run(program, server, "fork")
    assert out.count("PASS ") == 5, out


@pytest.mark.nvcc
def test_with_device_printf_the_kernels_lines_come_before_the_copy_returns(printing_program, server):
    out = _run(printing_program, server)
    lines = out.splitlines()
    assert lines.index("device round 1") < lines.index("host after round 1"), out
