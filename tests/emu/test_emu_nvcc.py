"""Kernels compiled by nvcc at test time (the committed fixtures keep the rest runnable without it)."""
import subprocess
from pathlib import Path

import numpy as np
import pytest

CUDA = Path(__file__).resolve().parent / "cuda"


@pytest.mark.nvcc
@pytest.mark.parametrize("flags", [["-arch=sm_75"], ["-arch=sm_90"], ["-G", "-arch=sm_75"]])
def test_freshly_compiled_ptx_runs(tmp_path, make_runner, rng, flags):
    out = tmp_path / "reduce.ptx"
    subprocess.run(["nvcc", "-ptx", *flags, str(CUDA / "reduce.cu"), "-o", str(out)], check=True)
    r = make_runner()
    mod = r.dev.load_module([out.read_text()])
    n, bs = 5000, 128
    x = rng.integers(-100, 100, n, dtype=np.int32)
    nb = (n + bs - 1) // bs
    po, ps = r.zeros(n, np.int32), r.zeros(nb, np.int32)
    r.launch(mod, "block_scan", (nb,), (bs,), r.put(x), po, ps, n, shared=bs * 4)
    xp = np.pad(x, (0, nb * bs - n)).reshape(nb, bs)
    assert np.array_equal(r.get(po, n, np.int32), np.cumsum(xp, axis=1).ravel()[:n])


@pytest.mark.nvcc
def test_rdc_build_links_in_the_emulator(tmp_path, make_runner):
    texts = []
    for part in ("rdc_a", "rdc_b"):
        out = tmp_path / f"{part}.ptx"
        subprocess.run(["nvcc", "-ptx", "-rdc=true", str(CUDA / "rdc" / f"{part}.cu"), "-o", str(out)], check=True)
        texts.append(out.read_text())
    r = make_runner()
    mod = r.dev.load_module(texts)
    a = np.arange(10, dtype=np.float32)
    pc = r.zeros(10, np.float32)
    r.launch(mod, "rdc_kernel", (1,), (32,), r.put(a), r.put(a), pc, 10)
    assert np.array_equal(r.get(pc, 10, np.float32), a * 3 * 3)
