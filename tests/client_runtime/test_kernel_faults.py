"""A kernel's fault reaches the application's stderr, also with a server elsewhere: a failed
device assertion as NVIDIA's stack prints it, another fault with the demangled kernel, the
instruction and the source line; once, though every later call repeats the error."""
from __future__ import annotations

import re

import pytest

from client_runtime_support import Server, build_program, cricket_run


@pytest.fixture(scope="module")
def faults_program(shim, tmp_path_factory):
    return build_program(tmp_path_factory, "kernel_faults", "-lineinfo")


@pytest.fixture(scope="module")
def remote(tmp_path_factory):
    s = Server(tmp_path_factory.mktemp("faults-server"))
    yield s
    s.stop()


@pytest.mark.nvcc
def test_a_failed_device_assertion_prints_as_nvidia_prints_it(remote, faults_program):
    res = cricket_run([str(faults_program), "assert"], server=remote.address)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "sync: cudaErrorAssert\nnext: cudaErrorAssert" in res.stdout
    lines = [line for line in res.stderr.splitlines() if "Assertion" in line]
    assert len(lines) == 1, res.stderr
    assert re.fullmatch(r"\S*kernel_faults\.cu:11: .*faults::check_positive.*: block: \[0,0,0\], "
                        r"thread: \[3,0,0\] Assertion `v\[threadIdx\.x\] >= 0` failed\.", lines[0]), lines[0]
    assert "Traceback" not in res.stderr


@pytest.mark.nvcc
def test_an_illegal_address_names_the_demangled_kernel_and_the_line(remote, faults_program):
    res = cricket_run([str(faults_program), "address"], server=remote.address)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "sync: cudaErrorIllegalAddress\nnext: cudaErrorIllegalAddress" in res.stdout
    lines = [line for line in res.stderr.splitlines() if line.startswith("cricket: kernel ")]
    assert len(lines) == 1, res.stderr
    line = lines[0]
    assert "void faults::write_far<int>(int*) failed: CUDA_ERROR_ILLEGAL_ADDRESS (700)" in line, line
    assert re.search(r"at `st\.global\S* .*` \(\S*kernel_faults\.cu:16\)$", line), line
    assert "Traceback" not in res.stderr
