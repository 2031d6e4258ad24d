"""bench/torch_gpu.py (the GPU ladder) runs end to end where there is no GPU: emu through
`cricket run` against torch on the CPU, tiny sizes. The matmul runs from cuBLAS's PTX and matches
the CPU; elementwise ops are SASS-only in libtorch_cuda, so that step is reported as not run with
torch's message while the others go on."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from .torch_support import ROOT, torch_python


def test_ladder_on_emu_against_the_cpu(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CRICKET_SERVER")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "torch_gpu.py"), "run", "--backend", "emu",
                           "--reference", "cpu", "--size", "tiny", "--steps", "elementwise,matmul",
                           "--repeat", "1", "--python", torch_python()[0], "--out", str(tmp_path)],
                          capture_output=True, text=True, env=env, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = {r["step"]: r for r in json.loads((tmp_path / "torch.json").read_text())}
    assert rows["matmul"]["verdict"] in ("equal", "close")
    assert rows["matmul"]["max_abs_diff"] < 1e-3 and rows["matmul"]["ratio"] > 0
    assert rows["elementwise"]["verdict"] == ("not run: AcceleratorError: CUDA error: no kernel image is "
                                              "available for execution on the device")
    assert "| matmul | " in (tmp_path / "torch.md").read_text()
