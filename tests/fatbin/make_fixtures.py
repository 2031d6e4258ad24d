"""Regenerate the committed fixtures in tests/fatbin/fixtures/ from tests/fatbin/cuda/params.cu.

They let the parser tests run where nvcc is missing. Needs nvcc and fatbinary
(CUDA 13). Run: python tests/fatbin/make_fixtures.py
"""
from __future__ import annotations

import pathlib
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
SOURCE = HERE / "cuda" / "params.cu"
OUT = HERE / "fixtures"

# fatbinary's hidden --compress-algorithm: 1 zlib, 2 LZ4 block, 3 LZ4 frame, 5 zstd.
ALGORITHMS = {"zlib": 1, "lz4": 2, "lz4frame": 3, "zstd": 5}


def run(*cmd: str) -> None:
    subprocess.run(cmd, check=True)


def main() -> int:
    OUT.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        t = pathlib.Path(tmp)
        for arch in (75, 90, 100):
            run("nvcc", "-cubin", f"-arch=sm_{arch}", "-o", str(t / f"sm{arch}.cubin"), str(SOURCE))
            run("nvcc", "-ptx", f"-arch=sm_{arch}", "-o", str(t / f"sm{arch}.ptx"), str(SOURCE))
        for name, alg in ALGORITHMS.items():
            run("fatbinary", f"--create={OUT / f'params_sm75_{name}.fatbin'}", "-64", "--compress-all",
                f"--compress-algorithm={alg}",
                f"--image3=kind=elf,sm=75,file={t / 'sm75.cubin'}",
                f"--image3=kind=ptx,sm=75,file={t / 'sm75.ptx'}")
        run("fatbinary", f"--create={OUT / 'params_multi.fatbin'}", "-64", "--compress-all",
            f"--image3=kind=elf,sm=90,file={t / 'sm90.cubin'}",
            f"--image3=kind=ptx,sm=90,file={t / 'sm90.ptx'}",
            f"--image3=kind=elf,sm=100,file={t / 'sm100.cubin'}",
            f"--image3=kind=ptx,sm=100,file={t / 'sm100.ptx'}")
        # a host object file (.obj: *.o is git-ignored): wrapper resolved through .rela.nvFatBinSegment
        run("nvcc", "-c", "-arch=sm_75", "-Xfatbin", "-compress-all", "-o", str(OUT / "params_sm75.obj"),
            str(SOURCE))
    for p in sorted(OUT.iterdir()):
        print(f"{p.relative_to(HERE)}: {p.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
