"""Regenerate the committed PTX fixtures from ``cuda/*.cu`` with nvcc (run after editing a source).

    python tests/emu/regen_ptx.py            # writes tests/emu/ptx/NAME.VARIANT.ptx

The tests run from these fixtures, so they need no CUDA toolkit; tests marked ``nvcc`` also compile
the sources afresh.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
CUDA = HERE / "cuda"
OUT = HERE / "ptx"

# variant name -> nvcc flags
VARIANTS = {
    "sm75": ["-arch=sm_75"],
    "sm75G": ["-G", "-arch=sm_75"],
    "sm80": ["-arch=sm_80"],
    "sm75L": ["-lineinfo", "-arch=sm_75"],
    "sm90": ["-arch=sm_90"],
    "rdc75": ["-rdc=true", "-arch=sm_75"],
}

# source -> variants built from it
BUILDS = {
    "basic": ["sm75", "sm75G"],
    "matmul": ["sm75", "sm75G"],
    "reduce": ["sm75", "sm75G"],
    "histogram": ["sm75", "sm75G"],
    "diverge": ["sm75", "sm75G"],
    "mathfn": ["sm75"],
    "intops": ["sm75", "sm75G"],
    "params": ["sm75", "sm75G"],
    "devfunc": ["sm75", "sm75G", "sm75L"],
    "printf": ["sm75", "sm75G"],
    "faults": ["sm75L"],
    "sync": ["sm75", "sm75G", "sm80"],
    "shfl": ["sm75"],
    "extras": ["sm75", "sm75G"],
    "pipeline": ["sm75", "sm80"],
    "cub": ["sm75", "sm90"],
    "warp_size": ["sm75", "sm75G"],
    "simd_intrinsics": ["sm75", "sm90"],
    "wmma": ["sm80"],
    "mma_sync": ["sm80"],
    "wmma_gemm": ["sm80"],
    "stmatrix": ["sm90"],
    "mma_raw": ["sm90"],
    "calls": ["sm75", "sm75G", "sm90"],
    "heap": ["sm75", "sm75G"],
    "mbarrier": ["sm80", "sm90"],
    "textures": ["sm75"],
    "grad_sured": ["sm75"],
    "mma_m8n8k4": ["sm75"],
    "tensor_copy": ["sm90"],
    "device_launch": ["rdc75"],
}
RDC = ["rdc/rdc_a", "rdc/rdc_b"]


def compile_ptx(src: Path, flags: list[str], out: Path) -> None:
    cmd = ["nvcc", "-ptx", *flags, str(src), "-o", str(out)]
    subprocess.run(cmd, check=True)
    # keep fixtures independent of the checkout path
    text = out.read_text().replace(str(CUDA) + "/", "")
    out.write_text(text)


def main() -> int:
    OUT.mkdir(exist_ok=True)
    for name, variants in BUILDS.items():
        for v in variants:
            compile_ptx(CUDA / f"{name}.cu", VARIANTS[v], OUT / f"{name}.{v}.ptx")
    for name in RDC:
        compile_ptx(CUDA / f"{name}.cu", ["-rdc=true", "-arch=sm_75"], OUT / f"{Path(name).name}.rdc.ptx")
    print(f"wrote {len(list(OUT.glob('*.ptx')))} PTX files to {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
