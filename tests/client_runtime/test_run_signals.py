"""`cricket run` and signals: the program gets them as if started directly, and neither it nor the
local server outlives `cricket run`, whatever ends it."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from client_runtime_support import ROOT


def _children(pid: int) -> dict[int, str]:
    """The children of ``pid`` and their command lines."""
    kids = {}
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/children") as f:
                for child in f.read().split():
                    with open(f"/proc/{child}/cmdline", "rb") as c:
                        kids[int(child)] = c.read().replace(b"\0", b" ").decode()
        except OSError:
            pass
    return kids


def _alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie awaiting its reaper does not count)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _start(command: list[str]) -> tuple[subprocess.Popen, int, int]:
    """``cricket run -- command`` with a local server; (cricket run, server pid, program pid)."""
    env = {k: v for k, v in os.environ.items() if k != "CRICKET_SERVER"}
    run = subprocess.Popen([sys.executable, "-m", "cricket", "run", "--backend", "emu", "--", *command],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env,
                           start_new_session=True)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        kids = _children(run.pid)
        server = [p for p, cmd in kids.items() if " cricket server " in cmd]
        program = [p for p, cmd in kids.items() if cmd.startswith(command[0])]
        if server and program:
            return run, server[0], program[0]
        assert run.poll() is None, run.communicate()
        time.sleep(0.05)
    run.kill()
    pytest.fail(f"cricket run did not start both children: {_children(run.pid)}")


def _gone_within(pids: list[int], seconds: float) -> list[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(map(_alive, pids)):
        time.sleep(0.05)
    return [p for p in pids if _alive(p)]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_signal_reaches_the_program_and_everything_ends(shim, sig):
    run, server, program = _start(["sleep", "300"])
    run.send_signal(sig)
    out, err = run.communicate(timeout=30)
    assert run.returncode == 128 + sig, err       # sleep ended by the signal it was passed
    assert "Traceback" not in err
    assert _gone_within([server, program], 10) == []


def test_sigkill_of_cricket_run_leaves_no_orphans(shim):
    run, server, program = _start(["sleep", "300"])
    run.kill()
    run.communicate(timeout=30)
    assert _gone_within([server, program], 10) == []


def test_a_program_that_handles_sigterm_decides_the_status(shim):
    script = ("import signal, sys, time\n"
              "signal.signal(signal.SIGTERM, lambda *a: sys.exit(5))\n"
              "print('ready', flush=True)\n"
              "time.sleep(300)\n")
    run, server, program = _start([sys.executable, "-c", script])
    run.stdout.readline()          # its handler is in place
    run.terminate()
    out, err = run.communicate(timeout=30)
    assert run.returncode == 5, err
    assert "Traceback" not in err
    assert _gone_within([server, program], 10) == []


def test_a_closed_stderr_does_not_stop_the_program(shim):
    env = {k: v for k, v in os.environ.items() if k != "CRICKET_SERVER"}
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        r = subprocess.run([sys.executable, "-m", "cricket", "run", "--backend", "emu", "--stats", "--",
                            "sh", "-c", "exit 4"], stdout=subprocess.PIPE, stderr=write_end, cwd=ROOT,
                           env=env, timeout=120)
    finally:
        os.close(write_end)
    assert r.returncode == 4


def test_help_shows_examples():
    r = subprocess.run([sys.executable, "-m", "cricket", "run", "--help"], capture_output=True, text=True,
                       cwd=ROOT, timeout=60)
    assert r.returncode == 0 and "examples:\n  cricket run -- " in r.stdout
