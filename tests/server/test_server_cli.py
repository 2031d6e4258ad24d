"""`cricket server` command line: options, bad input, Unix sockets, clean shutdown."""
import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cricket.client.api import connect

HERE = Path(__file__).resolve().parent


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "cricket", "server", *args], capture_output=True,
                          text=True, timeout=60)


def test_help_names_every_option():
    r = run_cli("--help")
    assert r.returncode == 0
    for option in ("--listen", "--unix", "--backend", "--token", "--admin-token", "--list-backends",
                   "--poll-us"):
        assert option in r.stdout


@pytest.mark.parametrize(("env", "argv", "expected"), [
    ("", [], 100.0), ("0", [], 0.0), ("250", [], 250.0), ("soon", [], 100.0), ("", ["--poll-us", "20"], 20.0),
    ("250", ["--poll-us", "0"], 0.0), ("1e9", [], 10_000.0)])
def test_the_polling_window_comes_from_the_option_or_the_environment(monkeypatch, capsys, env, argv, expected):
    from cricket.server import cli
    monkeypatch.setenv("CRICKET_SERVER_POLL_US", env)
    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    assert parser.parse_args(argv).poll_us == expected
    assert ("not a number of microseconds" in capsys.readouterr().err) == (env == "soon")


def test_bad_listen_address_is_refused_with_the_expected_form():
    r = run_cli("--listen", "localhost")
    assert r.returncode == 2
    assert "use HOST:PORT" in r.stderr


def test_unix_socket_server_serves_and_removes_its_socket_on_sigterm(tmp_path):
    sock = tmp_path / "cricket.sock"
    ready = tmp_path / "ready"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), str(HERE.parents[1])])}
    proc = subprocess.Popen([sys.executable, "-m", "cricket", "server", "--unix", str(sock),
                             "--ready-file", str(ready), "--backend", "plugin_backend:HostMemoryBackend"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 60
        while not ready.exists():
            assert proc.poll() is None and time.monotonic() < deadline, proc.stdout.read()
            time.sleep(0.02)
        assert ready.read_text().strip() == str(sock)
        with connect(str(sock)) as conn:
            assert conn.to_device(b"unix").to_host() == b"unix"
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=20)
    assert proc.returncode == 0, out
    assert not sock.exists()
