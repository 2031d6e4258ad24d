"""Host threads that allocate and free at once, through `cricket run` and the libcudart shim: the
server hands a freed address straight back to the next cudaMalloc, which may be another thread's,
and each thread's cudaFree must still find its own allocation."""
from __future__ import annotations

import sys
import textwrap

from client_runtime_support import cricket_run

PROGRAM = textwrap.dedent("""
    import ctypes, sys, threading
    cudart = ctypes.CDLL("libcudart.so.13")
    cudart.cudaFree.argtypes = [ctypes.c_void_p]
    failures = []

    def worker(k):
        for i in range(40):
            p = ctypes.c_void_p()
            err = cudart.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(4096))
            if err:
                failures.append(f"thread {k} cudaMalloc #{i}: {err}")
                return
            err = cudart.cudaFree(p)
            if err:
                failures.append(f"thread {k} cudaFree #{i} of {p.value:#x}: {err}")
                return

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print("\\n".join(failures) or "PASS")
    sys.exit(1 if failures else 0)
""")


def test_threads_allocating_and_freeing_at_once_each_free_their_own(tmp_path, shim, server):
    script = tmp_path / "alloc_threads.py"
    script.write_text(PROGRAM)
    res = cricket_run([sys.executable, str(script)], server=server.address)
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout.strip().endswith("PASS")
