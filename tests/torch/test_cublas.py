"""cuBLAS (a static cudart of its own, reaching cricket's libcuda.so.1) creates its handle on emu
and runs the small GEMMs it has PTX for (up to 16x16 measured, and an nn.Linear(8, 4) forward);
the GEMMs it ships as SASS only for the emulated sm_75 fail at their launch (cuBLAS's static
cudart calls cuLaunchKernel) with no kernel image, and the log names the kernel and the library."""
from __future__ import annotations

from .torch_support import run_under_cricket

PROGRAM = r"""
import torch
torch.manual_seed(0)
a, b = torch.randn(4, 4), torch.randn(4, 4)
product = (a.cuda() @ b.cuda()).cpu()
print("small gemm equal:", torch.allclose(product, a @ b, atol=1e-5))
vector = (a.cuda() @ b[0].cuda()).cpu()
print("gemv equal:", torch.allclose(vector, a @ b[0], atol=1e-5))
linear, x = torch.nn.Linear(8, 4), torch.randn(2, 8)
print("linear equal:", torch.allclose(linear.cuda()(x.cuda()).cpu(), linear.cpu()(x), atol=1e-5))
a, b = torch.randn(64, 64), torch.randn(64, 64)
da, db = a.cuda(), b.cuda()
try:
    c = da @ db                             # nothing synchronises after it
    print("large gemm launched")
except RuntimeError as exc:
    print("large gemm:", str(exc).splitlines()[0])
print("still usable:", torch.equal(da.cpu(), a))
"""


def test_cublas_handle_and_small_gemm_on_emu():
    proc = run_under_cricket("-c", PROGRAM)
    lines = proc.stdout.splitlines()
    assert "small gemm equal: True" in lines
    assert "gemv equal: True" in lines
    assert "linear equal: True" in lines
    assert "CUBLAS_STATUS" not in proc.stderr
    # 64x64 picks volta_sgemm_128x32_nn, which cuBLAS ships as sm_75 SASS only: cuBLAS sees the
    # launch fail and says so; torch raises at the matmul (cublasSgemm in torch 2.14, cublasGemmEx
    # in 2.15)
    assert any(line.startswith("large gemm: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublas")
               for line in lines), lines
    assert "still usable: True" in lines
    report = [line for line in proc.stderr.splitlines() if "CUDA_ERROR_NO_BINARY_FOR_GPU" in line]
    assert len(report) == 1, proc.stderr[-4000:]
    assert "kernel volta_sgemm_128x32_nn:" in report[0] and "libcublasLt.so.13 ships no PTX" in report[0]
