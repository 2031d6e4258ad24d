"""Large-buffer allocator tuning: set once per process, and switched off by CRICKET_MALLOC_TUNING=0."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from cricket.rpc import heap

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc mallopt is Linux-only")

_PROBE = textwrap.dedent("""
    import ctypes, sys, time
    from cricket.rpc import heap
    print(heap.keep_large_buffers())
    # A freed 8 MiB block stays in the heap when tuned: allocating it again does not fault pages in.
    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = (ctypes.c_size_t,)
    libc.free.argtypes = (ctypes.c_void_p,)
    def minflt():
        import resource
        return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    n = 8 << 20
    def cycle():   # two payloads alive at once (a record and its decoded copy), then both freed
        a = libc.malloc(n); ctypes.memset(a, 1, n)
        b = libc.malloc(n); ctypes.memset(b, 1, n)
        libc.free(b); libc.free(a)
    for _ in range(2):
        cycle()
    before = minflt()
    for _ in range(10):
        cycle()
    print(minflt() - before)
""")


def _probe(env_value: str | None) -> tuple[str, int]:
    env = dict(os.environ)
    env.pop("CRICKET_MALLOC_TUNING", None)
    if env_value is not None:
        env["CRICKET_MALLOC_TUNING"] = env_value
    out = subprocess.run([sys.executable, "-c", _PROBE], env=env, check=True, capture_output=True,
                         text=True).stdout.split()
    return out[0], int(out[1])


def test_tuned_process_reuses_freed_large_blocks_without_page_faults():
    tuned, faults = _probe(None)
    assert tuned == "True"
    # 20 × 8 MiB on untouched pages would be ~40,000 faults; reused heap pages fault (almost) never.
    assert faults < 500


def test_tuning_can_be_switched_off_and_then_large_blocks_fault_again():
    tuned, faults = _probe("0")
    assert tuned == "False"
    assert faults > 10 * (8 << 20) // 4096


def test_tuning_is_applied_once_and_remembered():
    assert heap.keep_large_buffers() is heap.keep_large_buffers()
