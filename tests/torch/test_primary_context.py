"""PyTorch finds a current CUDA context when it runs cuBLAS: the runtime shim makes the primary
context current at a thread's first runtime call that needs one, as NVIDIA's runtime does, so
torch's workaround (retain the primary context, warn "Attempting to run cuBLAS, but there was no
current CUDA context!") never runs, on the main thread or on a thread of the program's own."""
from __future__ import annotations

from .torch_support import run_under_cricket

PROGRAM = r"""
import ctypes, threading
import torch
torch.manual_seed(0)
cuda = ctypes.CDLL("libcuda.so.1")

def current_is_primary() -> bool:
    ctx, primary = ctypes.c_void_p(), ctypes.c_void_p()
    assert cuda.cuCtxGetCurrent(ctypes.byref(ctx)) == 0
    assert cuda.cuDevicePrimaryCtxRetain(ctypes.byref(primary), 0) == 0
    assert cuda.cuDevicePrimaryCtxRelease_v2(0) == 0
    return ctx.value is not None and ctx.value == primary.value

a, b = torch.randn(4, 4), torch.randn(4, 4)
print("main thread gemm equal:", torch.allclose((a.cuda() @ b.cuda()).cpu(), a @ b, atol=1e-5))
print("main thread current is primary:", current_is_primary())
seen = {}
def worker():
    seen["before"] = current_is_primary()
    seen["equal"] = torch.allclose((b.cuda() @ a.cuda()).cpu(), b @ a, atol=1e-5)
    seen["after"] = current_is_primary()
thread = threading.Thread(target=worker)
thread.start()
thread.join()
print("new thread current before, after:", seen["before"], seen["after"])
print("new thread gemm equal:", seen["equal"])
"""


def test_cublas_finds_the_primary_context_current():
    proc = run_under_cricket("-c", PROGRAM)
    assert proc.stdout.splitlines() == [
        "main thread gemm equal: True",
        "main thread current is primary: True",
        "new thread current before, after: False True",    # a thread starts without one, as in CUDA
        "new thread gemm equal: True",
    ], proc.stderr[-3000:]
    assert "no current CUDA context" not in proc.stderr, proc.stderr[-3000:]
