"""`cricket status` and `cricket top` against a real server while a client works on it: the
figures they show are the client's (memory, modules, kernels, bytes, its last error), only an
operator may ask, and --probe answers for health checks."""
from __future__ import annotations

import getpass
import json
import os
import threading

from watch_support import N, busy_client, cricket


def test_status_shows_each_session_as_the_server_sees_it(start_server, tmp_path, vadd_fatbin):
    server = start_server("--unix", str(tmp_path / "s.sock"), "--token", "tok")
    with busy_client(server.address, vadd_fatbin, "tok"):
        r = cricket("status", "--server", server.address, "--json", CRICKET_TOKEN="tok")
        assert r.returncode == 0, r.stderr
        status = json.loads(r.stdout)
        text = cricket("status", "--server", server.address, CRICKET_TOKEN="tok")
    assert status["pid"] == server.process.pid and status["uptime_ms"] > 0
    assert [b["type"] for b in status["backends"]] == ["emu"] and status["devices"][0]["backend"] == "emu"
    (s,) = status["sessions"]                      # the asking session is not listed
    assert s["peer"] == f"pid {os.getpid()} user {getpass.getuser()}"
    assert s["memory"] == 2 * N * 4 and s["allocations"] == 2 and s["modules"] == 1
    assert s["kernels"] == 3 and s["kernel_us"] > 0
    assert s["bytes_htod"] == N * 4 and s["bytes_dtoh"] == N * 4
    assert s["calls"] >= 8
    assert s["last_error"] == 1 and "memcpy_dtoh" in s["last_error_message"]
    assert text.returncode == 0 and "Traceback" not in text.stderr
    assert f"server pid {server.process.pid}" in text.stdout
    assert f"pid {os.getpid()} user" in text.stdout and "8.0 KiB" in text.stdout
    assert "last error: CUDA_ERROR_INVALID_VALUE (1)" in text.stdout


def test_on_tcp_only_the_admin_token_may_ask(start_server, vadd_fatbin):
    server = start_server("--listen", "127.0.0.1:0", "--token", "tok", "--admin-token", "adm")
    with busy_client(server.address, vadd_fatbin, "tok"):
        refused = cricket("status", "--server", server.address, CRICKET_TOKEN="tok")
        r = cricket("status", "--server", server.address, "--json", "--token", "adm")
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    assert refused.stderr.count("\n") == 1 and "admin token" in refused.stderr
    assert r.returncode == 0, r.stderr
    (s,) = json.loads(r.stdout)["sessions"]
    host, port = s["peer"].split(":")
    assert host == "127.0.0.1" and int(port) != server.port


def test_probe_says_whether_the_server_answers(start_server, tmp_path):
    server = start_server("--unix", str(tmp_path / "s.sock"), "--token", "tok")
    ok = cricket("status", "--probe", "--server", server.address)     # no token needed
    assert ok.returncode == 0 and "answers" in ok.stdout
    server.stop()
    gone = cricket("status", "--probe", "--server", server.address, "--timeout", "2")
    assert gone.returncode == 1 and "Traceback" not in gone.stderr
    assert gone.stderr.startswith("cricket status:") and gone.stderr.count("\n") == 1
    nothing = cricket("status", "--server", server.address)
    assert nothing.returncode == 1 and "Traceback" not in nothing.stderr and "cricket server" in nothing.stderr
    for command in (("status",), ("status", "--probe"), ("top", "--once")):
        bad = cricket(*command, "--server", "127.0.0.1:99999")
        assert bad.returncode == 1 and "Traceback" not in bad.stderr
        assert bad.stderr.count("\n") == 1 and "out of range" in bad.stderr, bad.stderr


def test_top_once_shows_call_rates(start_server, tmp_path, vadd_fatbin):
    server = start_server("--unix", str(tmp_path / "s.sock"))
    with busy_client(server.address, vadd_fatbin) as conn:
        stop = threading.Event()

        def keep_calling() -> None:
            while not stop.is_set():
                conn.mem_get_info()

        caller = threading.Thread(target=keep_calling)
        caller.start()
        try:
            r = cricket("top", "--once", "--interval", "0.5", "--server", server.address)
        finally:
            stop.set()
            caller.join()
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    header = next(line for line in lines if line.startswith("SESSION"))
    assert "CALLS/S" in header and "KERNEL TIME" in header
    row = lines[lines.index(header) + 1]
    assert f"pid {os.getpid()}" in row
    rate = float(row[header.index("CALLS/S"):].split()[0])
    assert rate > 0
    assert "\x1b[" not in r.stdout          # not a terminal: no screen clearing
