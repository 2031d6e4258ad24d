"""Per-thread default streams (cudaStreamPerThread, and stream 0 in the _ptsz/_ptds variants that
nvcc --default-stream per-thread selects): one server stream per host thread, created at its first
use, against a real cricket server (emu backend)."""
from __future__ import annotations

import re
import subprocess
import threading

import pytest

from client_runtime_support import ROOT, build_program, cricket_run
from cricket.client.runtime import Runtime
from cricket.cudafacts import streams


@pytest.fixture
def rt(server, monkeypatch):
    monkeypatch.setenv("CRICKET_SERVER", server.address)
    r = Runtime()
    yield r
    if r._conn is not None:
        r._conn.close()


def _in_thread(fn):
    out = []
    t = threading.Thread(target=lambda: out.append(fn()))
    t.start()
    t.join(30)
    return out[0]


def test_each_host_thread_gets_its_own_per_thread_stream(rt):
    mine = rt.stream(streams.PER_THREAD)
    assert mine and rt.stream(streams.PER_THREAD) == mine      # stable within the thread
    others = [_in_thread(lambda: rt.stream(streams.PER_THREAD)) for _ in range(2)]
    assert len({mine, *others}) == 3 and all(others)
    # real streams on the server; those of the threads that exited went with them
    assert rt.conn.session_stats()["streams"] == 1
    assert rt.stream(0) == rt.stream(streams.LEGACY) == 0       # the legacy default stream


def test_a_threads_per_thread_stream_is_destroyed_when_the_thread_exits(rt):
    rt.stream(streams.PER_THREAD)
    made, stop = threading.Barrier(3), threading.Event()

    def worker():
        rt.stream(streams.PER_THREAD)
        made.wait(30)
        stop.wait(30)

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for t in threads:
        t.start()
    made.wait(30)
    assert rt.conn.session_stats()["streams"] == 3      # while the threads live, their streams do
    stop.set()
    for t in threads:
        t.join(30)
    assert rt.conn.session_stats()["streams"] == 1      # gone with their threads, before the session ends
    assert rt.per_thread_streams == {rt.stream(streams.PER_THREAD)}


def test_per_thread_streams_are_made_again_after_they_are_forgotten(rt):
    first = rt.stream(streams.PER_THREAD)
    assert rt.forget_per_thread_streams() == [first]
    second = rt.stream(streams.PER_THREAD)
    assert second and second != first


@pytest.fixture(scope="module")
def per_thread_program(shim, tmp_path_factory):
    return build_program(tmp_path_factory, "per_thread_stream", "--default-stream", "per-thread")


@pytest.mark.nvcc
def test_program_built_for_per_thread_default_streams_passes(server, per_thread_program):
    symbols = subprocess.run(["nm", "-D", str(per_thread_program)], capture_output=True, text=True).stdout
    assert "__cudaLaunchKernel_ptsz" in symbols and "cudaMemcpy_ptds" in symbols
    res = cricket_run([str(per_thread_program)], server=server.address)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "PASS: 4 host threads" in res.stdout


@pytest.mark.nvcc
def test_native_threads_per_thread_streams_are_gone_before_the_program_ends(server, per_thread_program):
    """Four pthreads each use their per-thread stream and exit; at exit (CRICKET_STATS, asked of
    the server while the session is still open) none of their streams is left."""
    res = cricket_run([str(per_thread_program)], server=server.address,
                      env={"CRICKET_STATS": "1", "CRICKET_LOG": "debug"})
    assert res.returncode == 0, res.stdout + res.stderr
    assert "PASS: 4 host threads" in res.stdout
    assert res.stderr.count("a host thread exited: its per-thread stream(s)") == 4, res.stderr
    assert re.search(r"\[cricket\] .*, 0 stream\(s\) open", res.stderr), res.stderr


@pytest.fixture
def two_device_server(tmp_path, monkeypatch):
    """A real server whose backend stands in for two GPUs (two host-memory devices)."""
    import os
    import sys
    import time
    path = os.pathsep.join([str(ROOT / "tests" / "client_runtime"), str(ROOT / "tests" / "server"),
                            os.environ.get("PYTHONPATH", "")])
    monkeypatch.setenv("PYTHONPATH", path)
    address, ready = str(tmp_path / "s.sock"), tmp_path / "ready"
    proc = subprocess.Popen([sys.executable, "-m", "cricket", "server", "--unix", address, "--backend",
                             "two_device_backend:TwoDeviceBackend", "--ready-file", str(ready)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
    deadline = time.monotonic() + 60
    while not ready.exists():
        assert proc.poll() is None and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    yield address
    proc.terminate()
    proc.wait(10)


def test_current_device_is_per_host_thread(two_device_server, shim):
    import sys
    script = ROOT / "tests" / "client_runtime" / "programs" / "thread_devices.py"
    res = cricket_run([sys.executable, str(script)], server=two_device_server, backend="")
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout.splitlines()[-1] == "PASS", res.stdout + res.stderr
