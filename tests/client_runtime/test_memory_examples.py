"""The memory examples of issue 18 print PASS through `cricket run` on the emu backend, built by nvcc
with -cudart shared (the static-cudart builds run in tests/driver/test_examples_static.py):
stream-ordered memory and pools, managed memory, IPC between two processes, and a buffer grown with
the driver's virtual memory management. Each checks its results and the documented error codes."""
from __future__ import annotations

import pytest

from client_runtime_support import EXAMPLES_OUT, cricket_run, examples_build

MEMORY_EXAMPLES = ["stream_ordered_memory", "managed_memory", "ipc_memory", "vmm_growable"]


@pytest.fixture(scope="module")
def memory_examples(shim, run_lock):
    import shutil
    if not shutil.which("nvcc"):
        pytest.skip("nvcc (CUDA 13) not found on PATH")
    with run_lock("examples"):
        return examples_build.build(MEMORY_EXAMPLES, EXAMPLES_OUT, jobs=2)


@pytest.mark.nvcc
@pytest.mark.parametrize("name", MEMORY_EXAMPLES)
def test_memory_example_passes_through_cricket_run(name, memory_examples, server):
    res = cricket_run([str(memory_examples[name])], server=server.address)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "FAIL" not in res.stdout and res.stdout.splitlines()[-1].startswith("PASS"), res.stdout
