"""Real `cricket server` processes and stranger connections for the hostile-client tests."""
import os
import socket
import re
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

# The plugin backends of tests/server and the modules of this folder import in the server.
PLUGIN = "plugin_backend:HostMemoryBackend"
SERVER_PATH = os.pathsep.join([str(HERE.parent / "server"), str(HERE), str(HERE.parents[1])])


def rss_bytes(pid: int) -> int:
    """The resident set of a process, from /proc/PID/status."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmRSS in /proc/{pid}/status")


def raw_connection(server) -> socket.socket:
    """A TCP connection to the server that says nothing (a stranger)."""
    return socket.create_connection((server.host, server.port), timeout=30)


def closed_by_server(sock: socket.socket) -> bool:
    """Whether the server closed this connection: reading ends (EOF or reset) before the timeout."""
    try:
        while True:
            if not sock.recv(65536):
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False


def wait_for_log(server, text: "str | re.Pattern[str]", timeout: float = 30) -> bool:
    """Whether ``text`` (a substring, or a compiled pattern) appears in the server's log in time."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        out = server.output()
        if text.search(out) if isinstance(text, re.Pattern) else text in out:
            return True
        time.sleep(0.05)
    return False


def resources(pid: int) -> tuple[int, int, int]:
    """(RSS bytes, open descriptors, threads) of a process."""
    threads = len(os.listdir(f"/proc/{pid}/task"))
    return rss_bytes(pid), len(os.listdir(f"/proc/{pid}/fd")), threads


def warmed_up(server) -> tuple[int, int, int]:
    """Serve one client through shared memory (the server's descriptor inbox exists from then on)
    and return the server's resources after it left: the baseline of a test."""
    from cricket.client.api import connect
    with connect(server.address) as warm:
        assert warm.to_device(bytes(1 << 20)).to_host() == bytes(1 << 20)
        assert warm._shm_region
    return back_to(server, resources(server.process.pid), timeout=1)


def back_to(server, baseline: tuple[int, int, int], rss_slack: int = 16 << 20,
            timeout: float = 30) -> tuple[int, int, int]:
    """Wait until the server's descriptors and threads are back to ``baseline`` and its RSS
    within ``rss_slack`` of it; returns what it has then (the caller asserts)."""
    deadline = time.monotonic() + timeout
    while True:
        now = resources(server.process.pid)
        rss, fds, threads = now
        if (fds <= baseline[1] and threads <= baseline[2] and rss <= baseline[0] + rss_slack) \
                or time.monotonic() > deadline:
            return now
        time.sleep(0.05)


def assert_back_to(server, baseline: tuple[int, int, int], rss_slack: int = 16 << 20) -> None:
    rss, fds, threads = back_to(server, baseline, rss_slack)
    assert server.alive(), server.output()[-3000:]
    assert fds <= baseline[1], f"the server holds {fds - baseline[1]} more descriptors"
    assert threads <= baseline[2], f"the server runs {threads - baseline[2]} more threads"
    assert rss <= baseline[0] + rss_slack, f"the server grew by {(rss - baseline[0]) >> 20} MiB"


def server_help() -> str:
    """`cricket server --help`, its whitespace joined into single spaces."""
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-m", "cricket", "server", "--help"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return " ".join(r.stdout.split())
