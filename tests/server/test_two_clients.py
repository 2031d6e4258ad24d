"""Two clients at once: isolation, independent progress, and cleanup after a client is killed."""
import signal
import subprocess
import sys
import threading
import time

import pytest

from cricket.cudafacts import curesult
from cricket.client.api import CudaError, connect

PLUGIN = "plugin_backend:HostMemoryBackend"

# A client that allocates, loads, creates a stream and an event, says "ready", then waits.
HOLDER = r"""
import sys, time
from cricket.client.api import connect
conn = connect(sys.argv[1])
bufs = [conn.alloc(1 << 16) for _ in range(5)]
conn.create_stream(); conn.create_event()
image = open(sys.argv[2], "rb").read() if len(sys.argv) > 2 else b"// ptx\n.version 8.0\n.entry k\n"
conn.load_module(image)
print("ready", flush=True)
time.sleep(600)
"""

# A client that starts a long kernel and waits for it (killed in the middle of that call).
SPINNER = r"""
import sys
from cricket.client.api import connect
conn = connect(sys.argv[1])
out = conn.alloc(4 * 256)
spin = conn.load_module(sys.argv[2]).get_function("spin")
print("ready", flush=True)
spin.launch(1, 256, [out, int(sys.argv[3])], sync=True)
"""


def _wait_for_zero_allocations(observer, timeout=30.0) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        stats = observer.server_stats()
        if stats["allocations"] == 0 and stats["sessions"] == 1:
            return stats
        if time.monotonic() > deadline:
            raise AssertionError(f"server resources not freed: {stats}")
        time.sleep(0.05)


def _start_client(script: str, *args: str) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", script, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    assert line.strip() == "ready", proc.stderr.read()
    return proc


def test_handles_and_memory_of_one_client_are_rejected_for_the_other(start_server):
    server = start_server("--backend", PLUGIN)
    with connect(server.address) as a, connect(server.address) as b:
        secret = a.to_device(b"a's data")
        stream, event = a.create_stream(), a.create_event()
        module = a.load_module(b"// ptx\n.version 8.0\n.entry k\n")
        for attempt in (lambda: b.memcpy_dtoh(secret.device_ptr, 8),
                        lambda: b.memcpy_htod(secret.device_ptr, b"overwrite"),
                        lambda: b.memset(secret.device_ptr, 0, 8)):
            with pytest.raises(CudaError) as info:
                attempt()
            assert info.value.code == curesult.INVALID_VALUE
        b_stream = type(stream)(b, stream.handle)     # a's handle values, sent on b's connection
        b_event = type(event)(b, event.handle)
        for attempt in (b_stream.synchronize, b_event.synchronize, b_stream.destroy):
            with pytest.raises(CudaError) as info:
                attempt()
            assert info.value.code == curesult.INVALID_HANDLE
        with pytest.raises(CudaError) as info:
            type(module)(b, module.handle, b"", False).get_function("k")
        assert info.value.code == curesult.INVALID_HANDLE
        assert secret.to_host() == b"a's data"          # untouched


def test_killed_client_leaves_no_allocations_behind(start_server):
    server = start_server("--backend", PLUGIN)
    with connect(server.address) as observer:
        holder = _start_client(HOLDER, server.address)
        stats = observer.server_stats()
        assert stats["allocations"] == 5 and stats["modules"] == 1 and stats["streams"] == 1
        holder.send_signal(signal.SIGKILL)
        holder.wait()
        stats = _wait_for_zero_allocations(observer)
        assert stats["modules"] == 0 and stats["streams"] == 0 and stats["events"] == 0


def _spin_seconds(conn, spin, iterations) -> float:
    out = conn.alloc(4 * 256)
    t0 = time.perf_counter()
    spin.launch(1, 256, [out, iterations], sync=True)
    return time.perf_counter() - t0


def _iterations_for(conn, spin, seconds: float) -> int:
    """How many loop iterations make the spin kernel run for about ``seconds`` here."""
    _spin_seconds(conn, spin, 10)                 # compiles the kernel
    n = 1000
    while (t := _spin_seconds(conn, spin, n)) < 0.2:
        n *= 4
    return max(n, int(n * seconds / t))


@pytest.mark.nvcc
@pytest.mark.slow
def test_long_kernel_of_one_client_does_not_stall_the_other(emu_server, fatbins):
    with connect(emu_server.address) as a, connect(emu_server.address) as b:
        spin = a.load_module(fatbins["misc"]).get_function("spin")
        iterations = _iterations_for(a, spin, 3.0)          # about three seconds of kernel
        out = a.alloc(4 * 256)
        worker = threading.Thread(target=spin.launch, args=(1, 256, [out, iterations]),
                                  kwargs={"sync": True})
        t0 = time.perf_counter()
        worker.start()
        time.sleep(0.3)
        latencies = []
        while worker.is_alive() and len(latencies) < 200:
            s = time.perf_counter()
            b.ping()                                 # NULL
            b.to_device(b"x" * 64).free()            # alloc, copy, free on b's own worker
            latencies.append(time.perf_counter() - s)
            time.sleep(0.01)
        worker.join()
        kernel_time = time.perf_counter() - t0
        assert kernel_time > 1.0, "the kernel was too short to show anything"
        assert len(latencies) >= 5
        # Generous: b's calls never waited for a's kernel (which ran for seconds).
        assert max(latencies) < 0.5, (max(latencies), kernel_time)


@pytest.mark.nvcc
@pytest.mark.slow
def test_client_killed_in_the_middle_of_a_kernel_is_cleaned_up(emu_server, fatbins):
    with connect(emu_server.address) as observer:
        spin = observer.load_module(fatbins["misc"]).get_function("spin")
        iterations = _iterations_for(observer, spin, 1.5)
        spinner = _start_client(SPINNER, emu_server.address, str(fatbins["misc"]), str(iterations))
        time.sleep(0.3)                              # inside the synchronous launch now
        spinner.send_signal(signal.SIGKILL)
        spinner.wait()
        # The observer's own buffer stays; everything of the killed client must go.
        deadline = time.monotonic() + 30
        while True:
            stats = observer.server_stats()
            mine = observer.session_stats()["allocations"]
            if stats["sessions"] == 1 and stats["allocations"] == mine:
                break
            assert time.monotonic() < deadline, f"killed client's resources not freed: {stats}"
            time.sleep(0.05)
        assert emu_server.alive()
