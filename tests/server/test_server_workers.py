"""`cricket server --workers 2` as a user runs it: real server processes (emu backend), real clients
(the Python API, `cricket run` on nvcc-built programs, `cricket status`, a Prometheus scrape).
Connections go to the workers in turn, so two consecutive clients sit on different workers; each
session's id says which (worker i of N gives ids i+1, i+1+N, ...). The tests that need no limit
and no failure share one server (``workers_server``); the others start their own."""
from __future__ import annotations

import fcntl
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest

from cricket.client.api import CudaError, connect
from cricket.cudafacts import curesult
from cricket.protocol import gen as P
from cricket.rpc.errors import SystemErr

REPO = Path(__file__).resolve().parents[2]
MIB = 1 << 20
N = 4096


def _cricket(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cricket", *args], capture_output=True, text=True,
                          timeout=120, cwd=REPO, env={**os.environ, **(env or {})})


def _status(server) -> dict:
    r = _cricket("status", "--server", server.address, "--json", "--token", "adm")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def _add_vectors(conn, fatbin: Path, scale: float) -> None:
    a = conn.to_device(np.arange(N, dtype=np.float32) * scale)
    c = conn.alloc(N * 4)
    conn.load_module(fatbin.read_bytes()).get_function("vadd")((N // 128,), (128,), a, a, c, N)
    conn.synchronize()
    assert np.array_equal(c.to_host(np.float32), 2 * scale * np.arange(N, dtype=np.float32))


def _until(check, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while not (result := check()):
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)
    return result


@pytest.fixture(scope="module")
def workers_server(start_module_server):
    """One `cricket server --workers 2 --backend emu --admin-token adm` for the tests of this module
    that set no limit and stop no worker; each closes its sessions before the next one starts."""
    return start_module_server("--workers", "2", "--backend", "emu", "--admin-token", "adm")


def test_sessions_on_both_workers_compute_right_and_status_lists_them_all(workers_server, fatbins):
    server = workers_server
    clients = [connect(server.address) for _ in range(4)]
    try:
        for k, conn in enumerate(clients):
            _add_vectors(conn, fatbins["vadd"], k + 1)
        status = _status(server)            # asked on a fifth connection: one worker answers for all
    finally:
        for conn in clients:
            conn.close()
    sessions = status["sessions"]
    assert status["sessions_total"] == 4 and len(sessions) == 4
    assert sorted(s["id"] % 2 for s in sessions) == [0, 0, 1, 1]      # two sessions on each worker
    assert all(s["kernels"] == 1 and s["memory"] == 2 * N * 4 and s["modules"] == 1 for s in sessions)
    assert "serving from 2 worker processes" in server.output()


def test_cricket_run_programs_get_right_results_on_both_workers(workers_server, nvcc_build):
    exe = nvcc_build("-cudart", "shared", REPO / "examples" / "vector_add.cu", output="vector_add")
    server = workers_server
    before = len(server.output())
    runs = [subprocess.Popen([sys.executable, "-m", "cricket", "run", "--", str(exe)], cwd=REPO,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env={**os.environ, "CRICKET_SERVER": server.address}) for _ in range(2)]
    for run in runs:
        out, err = run.communicate(timeout=180)
        assert run.returncode == 0, err
        assert out.startswith("PASS: vector add"), out
    opened = re.findall(r"session (\d+) opened", server.output()[before:])      # the two runs' sessions
    assert len(opened) == 2 and {int(i) % 2 for i in opened} == {0, 1}


def test_the_device_memory_budget_holds_across_workers(start_server):
    server = start_server("--workers", "2", "--backend", "emu", "--device-memory", "96M")
    with connect(server.address) as here:
        with connect(server.address) as there:               # the next connection: the other worker
            there.alloc(64 * MIB)
            assert here.mem_get_info()[0] == 32 * MIB        # what the other worker holds counts
            here.alloc(32 * MIB)
            with pytest.raises(CudaError) as refused:
                here.alloc(MIB)
            assert (refused.value.code, "--device-memory" in refused.value.message) == (curesult.OUT_OF_MEMORY, True)
        # the closed session's bytes are free again, for the session on the other worker
        _until(lambda: here.mem_get_info()[0] == 64 * MIB)
        here.alloc(64 * MIB)


def test_max_sessions_holds_across_workers(start_server):
    server = start_server("--workers", "2", "--backend", "emu", "--max-sessions", "2")
    with connect(server.address), connect(server.address) as on_second_worker:
        with pytest.raises(SystemErr):       # the first worker holds one: its own limit is not the bound
            connect(server.address)
        assert "limit of 2 connections is reached" in server.output()
        on_second_worker.close()
        again = _until(lambda: _try_connect(server.address))
        again.close()


def _try_connect(address: str):
    try:
        return connect(address)
    except Exception:       # noqa: BLE001 - refused while the closed session's seat comes back
        return None


def _attach_pinned(conn) -> object:
    from cricket.client import shm as client_shm
    fd = os.memfd_create("pinned", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    try:
        os.ftruncate(fd, 4096)
        os.posix_fallocate(fd, 0, 4096)
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL)
        client_shm.send_descriptor(conn._rpc, fd)
    finally:
        os.close(fd)
    return conn._stub.CR_SHM_ATTACH_PINNED(4096)


def test_pinned_regions_of_the_server_are_bounded_across_workers(start_server):
    server = start_server("--workers", "2", "--backend", "emu", env={"CRICKET_PINNED_REGIONS_TOTAL": "3"})
    with connect(server.address) as one, connect(server.address) as two:
        assert _attach_pinned(one).status == 0 and _attach_pinned(one).status == 0
        assert _attach_pinned(two).status == 0
        refused = _attach_pinned(two)
        assert refused.status == curesult.OUT_OF_MEMORY
        assert "CRICKET_PINNED_REGIONS_TOTAL" in refused.message
        assert one._stub.CR_SHM_DETACH_PINNED(1).status == 0
        assert _attach_pinned(two).status == 0                # the room one gave back, on the other worker


def _graph(conn, count: int):
    buf = conn.alloc(16)
    nodes = [P.cr_graph_node(kind=2, memset=P.cr_memset_args(dst=buf.device_ptr, value=k & 0xFF, element_size=1,
                                                            count=1, stream=0)) for k in range(count)]
    return conn._stub.CR_GRAPH_CREATE(P.cr_graph_args(nodes=nodes))


def test_graph_nodes_of_the_server_are_bounded_across_workers(start_server):
    server = start_server("--workers", "2", "--backend", "emu", env={"CRICKET_GRAPH_NODES_TOTAL": "100"})
    with connect(server.address) as one, connect(server.address) as two:
        made = _graph(one, 60)
        assert made.status == 0 and _graph(two, 40).status == 0
        refused = _graph(two, 1)
        assert refused.status == curesult.OUT_OF_MEMORY and "the server's executable graphs" in refused.message
        assert one._stub.CR_GRAPH_DESTROY(made.handle).status == 0
        assert _graph(two, 60).status == 0


def test_ipc_handles_open_on_their_worker_and_fail_clearly_on_another(workers_server):
    server = workers_server
    with connect(server.address) as owner, connect(server.address) as other, connect(server.address) as near:
        buf = owner.to_device(b"shared bytes")
        handle = owner._stub.CR_IPC_GET_MEM_HANDLE(buf.device_ptr).handle
        refused = other._stub.CR_IPC_OPEN_MEM_HANDLE(handle)           # other sits on the second worker
        assert refused.status == curesult.NOT_SUPPORTED and "--workers 1" in refused.message
        opened = near._stub.CR_IPC_OPEN_MEM_HANDLE(handle)             # near shares the owner's worker
        assert opened.status == 0
        data = near._stub.CR_MEMCPY_DTOH(P.cr_dtoh_args(src=opened.global_.ptr, size=12, stream=0)).data
        assert bytes(data) == b"shared bytes"
        unknown = other._stub.CR_IPC_OPEN_MEM_HANDLE(bytes(64))
        assert unknown.status == curesult.INVALID_HANDLE               # a handle of nobody stays invalid


def test_loadbackend_is_refused_with_what_to_do(workers_server):
    server = workers_server
    with connect(server.address, token="adm") as admin:
        res = admin._stub.CR_LOAD_BACKEND(P.cr_load_backend_args(type="emu", spec=""))
    assert res.status == curesult.NOT_SUPPORTED and "--workers 1" in res.message


def test_metrics_count_the_sessions_of_every_worker(start_server):
    pytest.importorskip("prometheus_client")
    server = start_server("--workers", "2", "--backend", "emu", "--metrics", "127.0.0.1:0")
    address = re.search(r"metrics at http://(\S+)/metrics", server.output()).group(1)
    with connect(server.address) as a, connect(server.address) as b:
        a.alloc(MIB)
        b.alloc(2 * MIB)
        text = urllib.request.urlopen(f"http://{address}/metrics", timeout=30).read().decode()
    assert re.search(r"^cricket_sessions 2\.0$", text, re.M), text
    held = sorted(float(v) for v in re.findall(r"^cricket_session_memory_bytes\{.*\} (\S+)$", text, re.M))
    assert held == [MIB, 2 * MIB]
    assert re.search(r'^cricket_calls_total\{procedure="mem_alloc"\} 2\.0$', text, re.M), text


def test_a_dying_worker_stops_the_server(start_server):
    server = start_server("--workers", "2", "--backend", "emu")
    pids = [int(p) for p in re.search(r"serving from 2 worker processes: (\d+) (\d+)", server.output()).groups()]
    survivor = connect(server.address)                # on the first worker
    os.kill(pids[1], signal.SIGKILL)
    assert server.process.wait(30) != 0
    assert f"server worker {pids[1]} ended" in server.output()
    with pytest.raises(Exception):                    # its session went with the server
        survivor.mem_get_info()
    survivor.close()


@pytest.mark.parametrize("args, says", [
    (("--workers", "0"), "--workers 0: give 1 to 64"),
    (("--workers", "2", "--register"), "--register works with one worker only"),
    (("--workers", "2", "--backend", "cuda=0,shared"), "leave out ',shared' or run with --workers 1"),
])
def test_usage_errors_are_one_line(args, says):
    r = _cricket("server", *args)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.count("\n") == 1 and says in r.stderr


def test_help_shows_workers_with_an_example():
    text = _cricket("server", "--help").stdout
    assert "--workers N" in text and "cricket server --workers 4 --backend emu" in text
