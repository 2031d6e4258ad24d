"""torch.cuda.CUDAGraph on emu: a small cuBLAS GEMM (one of those cuBLAS ships PTX for) captured
with ``torch.cuda.graph`` (stream capture through cricket's libcuda.so.1, which cuBLAS and torch's
static cudart reach) and replayed after its input changed; the replay computes from the new input."""
from __future__ import annotations

from .torch_support import run_under_cricket

PROGRAM = r"""
import torch
torch.manual_seed(0)
a, b = torch.randn(16, 16), torch.randn(16, 16)
da, db = a.cuda(), b.cuda()
side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):
    dc = da @ db                      # warm-up outside the capture: the cuBLAS handle and workspace
torch.cuda.current_stream().wait_stream(side)
graph = torch.cuda.CUDAGraph()
with torch.cuda.graph(graph):
    dc = da @ db
print("capturing after:", torch.cuda.is_current_stream_capturing())
for step in range(2):
    a = torch.randn(16, 16)
    da.copy_(a.cuda())
    graph.replay()
    torch.cuda.synchronize()
    print(f"replay {step} equal:", torch.allclose(dc.cpu(), a @ b, atol=1e-4))
"""


def test_captured_gemm_replays_with_new_input():
    proc = run_under_cricket("-c", PROGRAM)
    assert proc.stdout.splitlines() == ["capturing after: False", "replay 0 equal: True", "replay 1 equal: True"]
