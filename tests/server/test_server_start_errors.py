"""A server that cannot start as asked says why in one line and exits non-zero, never with a
traceback: an address in use or not on this host, a port out of range, a missing folder for the
Unix socket, a live server on that socket (which keeps serving), a backend that does not load.
A stale socket is replaced, and a server removes only its own socket when it stops."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def cricket(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    env = {**os.environ, "CRICKET_LOG": "warning"}
    return subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True, timeout=timeout,
                          env=env, cwd=ROOT)


def one_line_error(r: subprocess.CompletedProcess, prefix: str, *words: str) -> None:
    assert r.returncode != 0, r.stdout + r.stderr
    assert "Traceback" not in r.stderr + r.stdout
    lines = [line for line in r.stderr.splitlines() if line.startswith(prefix)]
    assert len(lines) == 1, r.stderr
    for word in words:
        assert word in lines[0], lines[0]


def start_server(*args: str, ready: Path) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-m", "cricket", "server", "--backend", "emu", "--ready-file",
                             str(ready), *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            cwd=ROOT)
    deadline = time.monotonic() + 60
    while not ready.exists():
        assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read()
        time.sleep(0.05)
    return proc


def stop(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGTERM)
    proc.wait(30)


@pytest.mark.parametrize("listen", ["127.0.0.1:80000", "127.0.0.1:65536", "[::1]:99999"])
def test_a_port_out_of_range_is_refused_not_wrapped(listen):
    one_line_error(cricket("cricket", "server", "--listen", listen), "cricket server:", "out of range", "0-65535")


def test_the_other_address_options_check_their_port_too():
    one_line_error(cricket("cricket", "run", "--server", "127.0.0.1:70000", "--", "true"), "cricket run:",
                   "out of range")
    one_line_error(cricket("cricket.rpc", "serve", "--listen", "127.0.0.1:70000", "no.such:Impl"),
                   "python -m cricket.rpc serve:", "out of range")


def test_an_address_in_use_is_named_with_what_to_do():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        r = cricket("cricket", "server", "--backend", "emu", "--listen", f"127.0.0.1:{port}")
    one_line_error(r, "cricket server:", f"127.0.0.1:{port}", "in use", "another port")


def test_an_address_this_host_does_not_have_is_refused():
    # 192.0.2.1 is TEST-NET-1 (RFC 5737): never a local interface; binding sends nothing.
    one_line_error(cricket("cricket", "server", "--backend", "emu", "--listen", "192.0.2.1:7391", "--insecure"),
                   "cricket server:", "192.0.2.1:7391")


def test_a_missing_folder_for_the_unix_socket(tmp_path):
    one_line_error(cricket("cricket", "server", "--backend", "emu", "--unix", str(tmp_path / "no" / "s.sock")),
                   "cricket server:", "does not exist")


@pytest.mark.parametrize("backend", ["foo", "emu=memory=abc"])
def test_a_backend_that_does_not_load_stops_the_server(backend):
    one_line_error(cricket("cricket", "server", "--backend", backend, "--listen", "127.0.0.1:0"),
                   "cricket server:", repr(backend), "--list-backends")


def test_a_skeleton_that_does_not_import_is_one_line():
    one_line_error(cricket("cricket.rpc", "serve", "nosuch.module:Impl"), "python -m cricket.rpc serve:",
                   "nosuch.module", "PYTHONPATH")


def test_a_live_unix_socket_is_refused_and_keeps_its_server(tmp_path):
    from cricket.client.api import connect
    sock = tmp_path / "s.sock"
    first = start_server("--unix", str(sock), ready=tmp_path / "ready")
    try:
        one_line_error(cricket("cricket", "server", "--backend", "emu", "--unix", str(sock)), "cricket server:",
                       "another server is listening")
        with connect(str(sock)) as conn:                  # the first one still serves on its socket
            assert conn.devices
    finally:
        stop(first)
    assert not sock.exists()


def test_a_stale_unix_socket_is_replaced(tmp_path):
    sock = tmp_path / "s.sock"
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(sock))                                  # bound, never listening: nobody accepts
    stale.close()
    server = start_server("--unix", str(sock), ready=tmp_path / "ready")
    try:
        from cricket.client.api import connect
        with connect(str(sock)) as conn:
            assert conn.devices
    finally:
        stop(server)


def test_an_object_that_is_no_skeleton_is_one_line():
    one_line_error(cricket("cricket.rpc", "serve", "cricket.protocol:gen"), "python -m cricket.rpc serve:",
                   "not a skeleton")
