"""`cricket run`: local server when none is given, the program's exit status, its environment."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from client_runtime_support import ROOT, cricket_run
from cricket.client import run_cli


@pytest.mark.nvcc
def test_without_a_server_a_local_one_runs_the_program_and_stops(examples):
    res = subprocess.run([sys.executable, "-m", "cricket", "run", "--backend", "emu", "--stats", "--",
                          str(examples["vector_add"])], capture_output=True, text=True, timeout=120,
                         cwd=ROOT, env={k: v for k, v in os.environ.items() if k != "CRICKET_SERVER"})
    assert res.returncode == 0, res.stdout + res.stderr
    assert "PASS: vector add" in res.stdout
    # --stats says what ran where and how long it took
    assert "1 kernel launch(es), 80000 B to and 40000 B from the device" in res.stderr
    assert "on emu via cricket" in res.stderr
    assert "exited with status 0 after" in res.stderr


def test_exit_status_is_the_programs(server, shim):
    res = cricket_run(["sh", "-c", "exit 7"], server=server.address)
    assert res.returncode == 7


def test_a_program_killed_by_a_signal_gives_128_plus_the_signal(server, shim):
    res = cricket_run(["sh", "-c", "kill -TERM $$"], server=server.address)
    assert res.returncode == 128 + signal.SIGTERM


def test_no_command_is_a_usage_error(shim):
    res = subprocess.run([sys.executable, "-m", "cricket", "run", "--server", "/nonexistent"],
                         capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert res.returncode == 2
    assert "no command given" in res.stderr


def test_environment_preloads_the_shim_and_names_the_server(shim):
    env = run_cli.program_environment("/tmp/x.sock", "emu", base={"LD_PRELOAD": "/lib/other.so",
                                                                 "PYTHONHOME": "/elsewhere"})
    assert env["LD_PRELOAD"].split(":") == [str(shim), "/lib/other.so"]
    assert env["CRICKET_SERVER"] == "/tmp/x.sock" and env["CRICKET_BACKEND"] == "emu"
    assert env["CRICKET_PYTHON"] == sys.executable
    assert str(ROOT) in env["CRICKET_PYTHONPATH"].split(os.pathsep)
    assert "PYTHONHOME" not in env


@pytest.mark.nvcc
def test_registration_is_lazy_nothing_reaches_the_server_before_a_launch(examples, fresh_server):
    before = fresh_server.stats()
    res = cricket_run([str(examples["device_info"])], server=fresh_server.address)   # no launch
    assert res.returncode == 0, res.stdout + res.stderr
    after = fresh_server.stats()
    assert after["image_cache_misses"] + after["image_cache_hits"] == \
        before["image_cache_misses"] + before["image_cache_hits"]
    res = cricket_run([str(examples["vector_add"])], server=fresh_server.address)    # one launch
    assert res.returncode == 0
    loaded = fresh_server.stats()
    assert loaded["image_cache_misses"] == after["image_cache_misses"] + 1


@pytest.mark.nvcc
def test_module_images_go_by_hash_the_second_run_sends_no_bytes(examples, fresh_server):
    for _ in range(2):
        res = cricket_run([str(examples["vector_add"])], server=fresh_server.address,
                          env={"CRICKET_STATS": "1"})
        assert res.returncode == 0, res.stdout + res.stderr
    assert "1 module(s) (0 image(s) sent)" in res.stderr
    assert fresh_server.stats()["image_cache_hits"] >= 1


@pytest.mark.nvcc
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_program_whose_server_dies_gets_cuda_errors_and_exits(mode, examples, fresh_server):
    # sync: blocked waiting for a reply; async: sending launches (no SIGPIPE may kill it)
    proc = subprocess.Popen([sys.executable, "-m", "cricket", "run", "--server", fresh_server.address,
                             "--", str(examples["long_running"]), mode], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert proc.stdout.readline().strip() == "running"
        fresh_server.process.kill()
        started = time.monotonic()
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 3, out + err
    assert "stopped: cudaErrorDevicesUnavailable" in out
    assert "connection to the cricket server was lost" in err
    assert time.monotonic() - started < 30


@pytest.mark.nvcc
def test_without_cricket_run_or_a_server_the_client_starts_and_stops_its_own(examples, tmp_path):
    env = run_cli.program_environment("", "emu")
    env.pop("CRICKET_SERVER")
    env["TMPDIR"] = str(tmp_path)             # where the embedded server's socket directory goes
    res = subprocess.run([str(examples["vector_add"])], env=env, capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "PASS" in res.stdout
    deadline = time.monotonic() + 10          # the embedded server is stopping as the program exits
    while True:
        leftovers = []
        for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
            try:
                if str(tmp_path).encode() in cmdline.read_bytes():
                    leftovers.append(cmdline.parent.name)
            except OSError:
                pass
        if not leftovers or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert leftovers == [], f"embedded server processes left running: {leftovers}"


@pytest.mark.nvcc
def test_a_server_that_stops_answering_is_given_up_after_cricket_timeout(examples, fresh_server):
    proc = subprocess.Popen([sys.executable, "-m", "cricket", "run", "--server", fresh_server.address,
                             "--", str(examples["long_running"])], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            env={**os.environ, "CRICKET_TIMEOUT": "2"})
    try:
        assert proc.stdout.readline().strip() == "running"
        fresh_server.process.send_signal(signal.SIGSTOP)     # alive, but silent
        out, err = proc.communicate(timeout=30)
    finally:
        fresh_server.process.send_signal(signal.SIGCONT)
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 3, out + err
    assert "stopped: cudaErrorDevicesUnavailable" in out
