"""Device printf through the preloaded runtime: kernel lines reach the program's own stdout at the
synchronising calls, in order with its host printf, from a separately started server; each
program sees only its own lines; a full buffer loses lines and says so once; a program without
device printf makes no fetch. Real cricket servers (emu backend), programs built by nvcc."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from client_runtime_support import ROOT, build_program, cricket_run


@pytest.fixture(scope="module")
def rounds(tmp_path_factory, shim):
    return build_program(tmp_path_factory, "printf_rounds", "-arch=sm_75")


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(("host", "device"))]


@pytest.mark.nvcc
def test_example_prints_device_lines_between_the_host_lines_around_the_sync(examples, server):
    res = cricket_run([str(examples["printf_kernel"])], server=server.address)
    assert res.returncode == 0, res.stdout + res.stderr
    lines = res.stdout.splitlines()
    device = [f"hello from thread {t} of block {b}, value {40 + t}" for b in (0, 1) for t in (0, 1)]
    assert lines == ["host: before the launch", "host: launched, not synchronised", *device,
                     "host: after cudaDeviceSynchronize",
                     "PASS: printf from a kernel (4 lines printed by the device)"]
    assert "hello from thread" not in server.output()


@pytest.mark.nvcc
def test_each_synchronising_call_delivers_the_lines_before_it_and_exit_the_rest(rounds, server):
    res = cricket_run([str(rounds), "tagged", "5"], server=server.address)
    assert res.returncode == 0, res.stdout + res.stderr
    expected = []
    for r in range(5):
        device = [f"device tag 5 round {r} thread {t}" for t in range(3)]
        before, after = f"host tag 5 round {r} before", f"host tag 5 round {r} after"
        # rounds 0-3 synchronise (device, stream, event, blocking copy); round 4 does not, and
        # its lines come at exit
        expected += [before, *device, after] if r < 4 else [before, after, *device]
    assert _lines(res.stdout) == expected


@pytest.mark.nvcc
def test_two_programs_on_one_server_each_see_only_their_own_lines(rounds, server):
    cmd = [sys.executable, "-m", "cricket", "run", "--server", server.address, "--", str(rounds), "tagged"]
    procs = [subprocess.Popen([*cmd, tag], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              cwd=ROOT) for tag in ("1", "2")]
    outs = [p.communicate(timeout=120) for p in procs]
    for proc, (out, err), mine, other in zip(procs, outs, ("1", "2"), ("2", "1")):
        assert proc.returncode == 0, out + err
        device = [line for line in _lines(out) if line.startswith("device")]
        assert len(device) == 15 and all(line.startswith(f"device tag {mine} ") for line in device)
        assert f"tag {other} " not in out


@pytest.mark.nvcc
def test_full_printf_buffer_keeps_what_fits_and_reports_the_loss_once(rounds, server):
    res = cricket_run([str(rounds), "flood"], server=server.address, env={"CRICKET_STATS": "1"})
    assert res.returncode == 0, res.stdout + res.stderr
    wide = [line for line in res.stdout.splitlines() if len(line) == 1000]
    kept = (1 << 20) // 1001                      # 1001-byte lines in CUDA's 1 MiB printf buffer
    assert len(wide) == kept
    assert sorted(int(line) for line in wide) == list(range(kept))     # the newest were dropped
    assert _lines(res.stdout) == ["host: after the flood", "device tag 7 round 0 thread 0", "host: done"]
    assert res.stderr.count("line(s) of kernel output were lost") == 1
    assert f"{4 * 320 - kept} line(s) of kernel output were lost" in res.stderr
    assert f"device printf: 2 fetch(es), {4 * 320 - kept} line(s) lost" in res.stderr


@pytest.mark.nvcc
def test_program_without_device_printf_makes_no_fetch(examples, server):
    res = cricket_run([str(examples["vector_add"])], server=server.address, env={"CRICKET_STATS": "1"})
    assert res.returncode == 0, res.stdout + res.stderr
    assert "device printf: 0 fetch(es), 0 line(s) lost" in res.stderr


@pytest.mark.nvcc
def test_local_server_prints_device_lines_once_and_its_log_on_stderr(examples):
    env = {k: v for k, v in os.environ.items() if k != "CRICKET_SERVER"}
    res = subprocess.run([sys.executable, "-m", "cricket", "run", "--backend", "emu", "--",
                          str(examples["printf_kernel"])], capture_output=True, text=True,
                         timeout=120, env=env, cwd=ROOT)
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout.count("hello from thread 1 of block 1, value 41") == 1
    assert "hello from thread" not in res.stderr


@pytest.mark.nvcc
def test_local_server_log_is_relayed_to_stderr_not_stdout(rounds):
    env = {k: v for k, v in os.environ.items() if k != "CRICKET_SERVER"}
    res = subprocess.run([sys.executable, "-m", "cricket", "run", "--backend", "emu", "--",
                          str(rounds), "flood"], capture_output=True, text=True, timeout=120, env=env,
                         cwd=ROOT)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "device printf buffer full" in res.stderr      # the server's own warning
    assert "printf buffer full" not in res.stdout and "cricket server listening" not in res.stdout


@pytest.mark.nvcc
def test_printf_fifo_size_limit_sizes_the_server_buffer_and_is_refused_after_a_launch(rounds, server):
    res = cricket_run([str(rounds), "limit"], server=server.address)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "host: printf buffer 4096 bytes" in res.stdout
    assert len([line for line in res.stdout.splitlines() if len(line) == 1000]) == 4096 // 1001
    assert "host: set after a printing launch: cudaErrorInvalidValue" in res.stdout
    assert "4 line(s) of kernel output were lost" in res.stderr


@pytest.mark.nvcc
def test_server_sees_output_fetches_only_from_a_program_whose_kernels_print(examples, server):
    def fetches() -> int:
        return server.stats().get("calls.device_output", 0)

    before = fetches()
    res = cricket_run([str(examples["vector_add"])], server=server.address)
    assert res.returncode == 0, res.stdout + res.stderr
    assert fetches() == before
    res = cricket_run([str(examples["printf_kernel"])], server=server.address)
    assert res.returncode == 0, res.stdout + res.stderr
    assert fetches() > before
