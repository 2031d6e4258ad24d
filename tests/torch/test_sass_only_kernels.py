"""libtorch_cuda ships SASS only: on emu the launch itself fails with
cudaErrorNoKernelImageForDevice, and the log names the kernel, the library and the way out."""
from __future__ import annotations

from .torch_support import run_under_cricket

PROGRAM = r"""
import torch
x = torch.zeros(16).cuda()                  # a copy: no kernel
try:
    y = x * 2                               # the launch; nothing synchronises after it
    print("launched")
except torch.AcceleratorError as exc:
    print("raised at launch:", str(exc).splitlines()[0])
print("still usable:", x.cpu().sum().item())
"""


def test_launch_from_sass_only_library_fails_at_the_launch():
    proc = run_under_cricket("-c", PROGRAM)
    lines = proc.stdout.splitlines()
    assert "raised at launch: CUDA error: no kernel image is available for execution on the device" in lines
    assert "still usable: 0.0" in lines
    report = [line for line in proc.stderr.splitlines() if "cudaErrorNoKernelImageForDevice" in line]
    assert len(report) == 1, proc.stderr[-4000:]
    assert "vectorized_elementwise_kernel" in report[0] and "MulFunctor" in report[0]
    assert "libtorch_cuda.so ships no PTX" in report[0]
    assert "GPU server" in report[0]
