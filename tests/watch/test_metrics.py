"""`cricket server --metrics`: Prometheus scrapes the figures of a client that is working."""
from __future__ import annotations

import re
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from watch_support import ROOT, N, busy_client, cricket, cricket_env

parser = pytest.importorskip("prometheus_client.parser", reason="prometheus_client is not installed")


def scrape(log_text: str) -> dict[tuple[str, tuple], float]:
    address = re.search(r"metrics at http://(\S+)/metrics", log_text).group(1)
    with urllib.request.urlopen(f"http://{address}/metrics", timeout=10) as r:
        text = r.read().decode()
    samples = {}
    for family in parser.text_string_to_metric_families(text):
        for s in family.samples:
            samples[s.name, tuple(sorted(s.labels.items()))] = s.value
    return samples


def test_a_scrape_shows_the_working_client(start_server, tmp_path, vadd_fatbin):
    server = start_server("--unix", str(tmp_path / "s.sock"), "--metrics", "127.0.0.1:0")
    with busy_client(server.address, vadd_fatbin) as conn:
        m = scrape(server.log.read_text())
        session = conn.session_id
    assert m["cricket_sessions", ()] == 1
    assert m["cricket_calls_total", (("procedure", "launch"),)] == 3
    assert m["cricket_call_duration_seconds_count", (("procedure", "mem_alloc"),)] == 2
    assert m["cricket_call_duration_seconds_bucket", (("le", "+Inf"), ("procedure", "mem_alloc"))] == 2
    assert m["cricket_copied_bytes_total", (("direction", "htod"), ("path", "socket"))] == N * 4
    assert m["cricket_copied_bytes_total", (("direction", "dtoh"), ("path", "socket"))] == N * 4
    assert m["cricket_kernels_total", (("backend", "emu"),)] == 3
    assert m["cricket_kernel_seconds_total", (("backend", "emu"),)] > 0
    assert m["cricket_errors_total", (("code", "CUDA_ERROR_INVALID_VALUE"),)] == 1
    memory = {labels: v for (name, labels), v in m.items() if name == "cricket_session_memory_bytes"}
    (labels, held), = memory.items()
    assert dict(labels)["session"] == str(session) and held == 2 * N * 4


def test_a_metrics_address_in_use_stops_the_server_with_one_line(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        r = cricket("server", "--backend", "emu", "--unix", str(tmp_path / "s.sock"),
                    "--metrics", f"127.0.0.1:{port}", timeout=60)
    assert r.returncode != 0 and "Traceback" not in r.stderr
    lines = [line for line in r.stderr.splitlines() if line.startswith("cricket server:")]
    assert len(lines) == 1 and "--metrics" in lines[0], r.stderr


def test_counters_keep_a_closed_sessions_figures(start_server, tmp_path, vadd_fatbin):
    server = start_server("--unix", str(tmp_path / "s.sock"), "--metrics", "127.0.0.1:0")
    with busy_client(server.address, vadd_fatbin):
        pass
    deadline = time.monotonic() + 30
    while (m := scrape(server.log.read_text()))["cricket_sessions", ()] and time.monotonic() < deadline:
        time.sleep(0.05)        # the session's teardown runs on its worker
    assert m["cricket_sessions", ()] == 0 and m["cricket_sessions_opened_total", ()] == 1
    assert m["cricket_calls_total", (("procedure", "launch"),)] == 3
    assert m["cricket_copied_bytes_total", (("direction", "htod"), ("path", "socket"))] == N * 4
    assert not [k for k in m if k[0] == "cricket_session_memory_bytes"]


def test_without_prometheus_client_the_server_says_what_to_install(tmp_path):
    # sys.modules[name] = None: importing it fails as when it is not installed
    script = ("import sys; sys.modules['prometheus_client'] = None\n"
              "from cricket.cli import main\n"
              f"sys.exit(main(['server', '--backend', 'emu', '--unix', {str(tmp_path / 's.sock')!r}, "
              "'--metrics', '127.0.0.1:0']))")
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                       cwd=ROOT, env=cricket_env())
    assert r.returncode == 1 and "Traceback" not in r.stderr
    lines = [line for line in r.stderr.splitlines() if line.startswith("cricket server:")]
    assert len(lines) == 1 and "cricket[metrics]" in lines[0], r.stderr
