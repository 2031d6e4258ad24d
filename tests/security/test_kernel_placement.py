"""Where an emu kernel runs: a small launch of a kernel that cannot loop runs in the server itself
(its work is bounded, so it needs no cancelling, and it saves the hand-off to a worker process);
everything else, endless kernels above all, runs in a kernel worker that can be stopped."""
from __future__ import annotations

import numpy as np

from cricket.backends.emu.device import program_of, program_digest
from cricket.backends.emu.workers import INLINE_THREADS, loop_free
from cricket.client.api import connect

from attacks import SPIN_PTX
from kernel_peers import PTX, RECURSION_PTX, descendants


def _kernel_ir(ptx: bytes, name: str):
    text = ptx.decode()
    return program_of([text], program_digest([text])).kernel(name)


def test_only_kernels_without_backward_branches_or_calls_are_loop_free():
    assert loop_free(_kernel_ir(PTX, "fill"))
    assert loop_free(_kernel_ir(PTX, "nothing"))
    assert not loop_free(_kernel_ir(PTX, "forever"))
    assert not loop_free(_kernel_ir(SPIN_PTX, "spin"))
    assert not loop_free(_kernel_ir(RECURSION_PTX, "depth"))


def test_small_loop_free_launches_run_in_the_server_and_the_rest_in_a_worker(start_server):
    server = start_server("--backend", "emu")
    with connect(server.address) as conn:
        fill = conn.load_module(PTX).get_function("fill")
        n = INLINE_THREADS
        out = conn.alloc(4 * n)
        for value in range(1, 8):                       # synchronous and asynchronous launches
            fill.launch(n // 256, 256, [out, value], sync=value % 2 == 0)
        conn.synchronize()
        assert (out.to_host(np.uint32) == 7).all()
        assert descendants(server.process.pid, below=1) == [], "a small fill forked a kernel worker"
        big = conn.alloc(4 * 2 * n)
        fill.launch(2 * n // 256, 256, [big, 5], sync=True)        # over the inline bound
        assert (big.to_host(np.uint32) == 5).all()
        assert len(descendants(server.process.pid, below=1)) >= 1
        spin = conn.load_module(SPIN_PTX).get_function("spin")
        spin.launch(1, 1, [1000], sync=True)                       # a loop: in the worker too
        fill.launch(1, 32, [out, 9], sync=True)
        assert (out.to_host(np.uint32)[:32] == 9).all() and (out.to_host(np.uint32)[32:] == 7).all()
